// The map page's drawing surface: every note as a point on one Canvas 2D, drawn once per
// animation frame and only when something changed. Points are grouped by colour so a frame is a
// few filled paths (one per colour), not one fill per point; points off screen are skipped. A
// spatial grid over the points answers "which point is under the pointer" without scanning
// them all. Pan with a drag (mouse or one finger), zoom with the wheel, a pinch, a double
// click or the keyboard (+, −, 0 fits, arrows pan, Enter picks the note nearest the middle). The first frame that shows every point
// leaves a `map-points-drawn` performance mark (the benchmark's first paint).

const MIN_ZOOM = 0.5;
const MAX_ZOOM = 600;
const LABELS_BELOW_ZOOM = 2.5; // cluster names show while zoomed out this far
const TITLES_BELOW = 60; // zoomed in until this few points show: their titles are drawn
const TAP_SLOP = 5; // px a press may move and still be a click

export class MapView {
  constructor(canvas, { onHover = () => {}, onSelect = () => {}, onView = () => {} } = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d", { alpha: true });
    this.onHover = onHover;
    this.onSelect = onSelect;
    this.onView = onView;
    this.n = 0;
    this.xs = new Float32Array(0);
    this.ys = new Float32Array(0);
    this.titles = [];
    this.colourOf = new Uint16Array(0);
    this.palette = [];
    this.order = new Int32Array(0); // point indices sorted by colour
    this.runs = []; // [colour, start, end) into order
    this.lit = null; // Uint8Array: 1 for a search hit; null: no search shown
    this.litList = [];
    this.selected = -1;
    this.lines = []; // [[i, j, "neighbour" | "missing"]]
    this.labels = []; // [{x, y, text, weight}]
    this.zoom = 1;
    this.cx = 0.5;
    this.cy = 0.5;
    this.width = 0;
    this.height = 0;
    this.dpr = 1;
    this.frame = 0;
    this.marked = false;
    this.drawTimes = []; // ms per frame drawn (the last 2,000), read by the benchmark
    this.pointers = new Map();
    this.gesture = null;
    this.hovered = -1;
    this.bind();
    this.resizer = new ResizeObserver(() => this.resize());
    this.resizer.observe(canvas);
    // The canvas reads the theme's colours as it draws: draw again when the theme changes.
    this.themer = new MutationObserver(() => this.invalidate());
    this.themer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => this.invalidate());
    this.resize();
  }

  // ---- data ------------------------------------------------------------------------------
  setPoints(xs, ys, titles) {
    this.n = xs.length;
    this.xs = xs;
    this.ys = ys;
    this.titles = titles;
    this.selected = -1;
    this.lines = [];
    this.lit = null;
    this.litList = [];
    this.marked = false;
    this.buildGrid();
    this.setColours(new Uint16Array(this.n), ["#888"]);
    this.fit();
  }

  setColours(colourOf, palette) {
    this.colourOf = colourOf;
    this.palette = palette;
    const counts = new Int32Array(palette.length + 1);
    for (let i = 0; i < this.n; i++) counts[colourOf[i] + 1]++;
    for (let c = 1; c < counts.length; c++) counts[c] += counts[c - 1];
    const order = new Int32Array(this.n);
    const next = counts.slice(0, palette.length);
    for (let i = 0; i < this.n; i++) order[next[colourOf[i]]++] = i;
    this.order = order;
    // Big groups first, so the smaller ones are drawn over them and stay visible.
    this.runs = palette.map((_, c) => [c, counts[c], counts[c + 1]]).filter((r) => r[2] > r[1])
      .sort((a, b) => (b[2] - b[1]) - (a[2] - a[1]));
    this.invalidate();
  }

  setLit(indices) {
    if (!indices) { this.lit = null; this.litList = []; } else {
      this.lit = new Uint8Array(this.n);
      for (const i of indices) this.lit[i] = 1;
      this.litList = [...indices];
    }
    this.invalidate();
  }

  setFocus(selected, lines = []) {
    this.selected = selected;
    this.lines = lines;
    this.invalidate();
  }

  setLabels(labels) {
    this.labels = [...labels].sort((a, b) => b.weight - a.weight);
    this.invalidate();
  }

  // ---- the camera ----------------------------------------------------------------------
  get scale() { return Math.min(this.width, this.height) * 0.92 * this.zoom; }
  toScreenX(x) { return (x - this.cx) * this.scale + this.width / 2; }
  toScreenY(y) { return (y - this.cy) * this.scale + this.height / 2; }

  fit() {
    if (!this.n) { this.zoom = 1; this.cx = this.cy = 0.5; this.invalidate(); return; }
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (let i = 0; i < this.n; i++) {
      const x = this.xs[i], y = this.ys[i];
      if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y;
    }
    this.cx = (x0 + x1) / 2;
    this.cy = (y0 + y1) / 2;
    // Fit the points' box to the canvas, whichever side is the tighter.
    const side = Math.max(1, Math.min(this.width, this.height)) * 0.92;
    const fitX = Math.max(1, this.width) / (side * Math.max(x1 - x0, 1e-3));
    const fitY = Math.max(1, this.height) / (side * Math.max(y1 - y0, 1e-3));
    this.zoom = clamp(Math.min(fitX, fitY) * 0.9, MIN_ZOOM, MAX_ZOOM);
    this.home = this.zoom;
    this.invalidate();
    this.onView();
  }

  zoomAt(factor, px = this.width / 2, py = this.height / 2) {
    const before = this.scale;
    const wx = this.cx + (px - this.width / 2) / before;
    const wy = this.cy + (py - this.height / 2) / before;
    this.zoom = clamp(this.zoom * factor, MIN_ZOOM * (this.home || 1), MAX_ZOOM);
    const after = this.scale;
    this.cx = wx - (px - this.width / 2) / after;
    this.cy = wy - (py - this.height / 2) / after;
    this.invalidate();
    this.onView();
  }

  panBy(dx, dy) {
    this.cx -= dx / this.scale;
    this.cy -= dy / this.scale;
    this.invalidate();
    this.onView();
  }

  centreOn(i, zoom = null) {
    if (i < 0 || i >= this.n) return;
    this.cx = this.xs[i];
    this.cy = this.ys[i];
    if (zoom !== null) this.zoom = clamp(Math.max(this.zoom, zoom), MIN_ZOOM, MAX_ZOOM);
    this.invalidate();
    this.onView();
  }

  // Where point i is on screen, in CSS pixels of the canvas.
  screenOf(i) { return { x: this.toScreenX(this.xs[i]), y: this.toScreenY(this.ys[i]) }; }

  // ---- hit testing: a grid of cells over the points' box ------------------------------------
  buildGrid() {
    const n = this.n;
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (let i = 0; i < n; i++) {
      const x = this.xs[i], y = this.ys[i];
      if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y;
    }
    const side = clamp(Math.ceil(Math.sqrt(n / 2)), 1, 256);
    const grid = { side, x0: n ? x0 : 0, y0: n ? y0 : 0, w: Math.max(x1 - x0, 1e-9), h: Math.max(y1 - y0, 1e-9) };
    const cellOf = new Int32Array(n);
    const start = new Int32Array(side * side + 1);
    for (let i = 0; i < n; i++) {
      const gx = Math.min(side - 1, Math.floor(((this.xs[i] - grid.x0) / grid.w) * side));
      const gy = Math.min(side - 1, Math.floor(((this.ys[i] - grid.y0) / grid.h) * side));
      cellOf[i] = gy * side + gx;
      start[cellOf[i] + 1]++;
    }
    for (let c = 1; c < start.length; c++) start[c] += start[c - 1];
    const items = new Int32Array(n);
    const next = start.slice(0, side * side);
    for (let i = 0; i < n; i++) items[next[cellOf[i]]++] = i;
    this.grid = { ...grid, start, items };
  }

  // The point nearest to (px, py) on screen within `radius` px, or -1. With search hits
  // shown, a hit wins over a dimmed point a little nearer.
  pointAt(px, py, radius = 8) {
    if (!this.n) return -1;
    const g = this.grid;
    const s = this.scale;
    const wx = this.cx + (px - this.width / 2) / s;
    const wy = this.cy + (py - this.height / 2) / s;
    const r = radius / s;
    const gx0 = clamp(Math.floor(((wx - r - g.x0) / g.w) * g.side), 0, g.side - 1);
    const gx1 = clamp(Math.floor(((wx + r - g.x0) / g.w) * g.side), 0, g.side - 1);
    const gy0 = clamp(Math.floor(((wy - r - g.y0) / g.h) * g.side), 0, g.side - 1);
    const gy1 = clamp(Math.floor(((wy + r - g.y0) / g.h) * g.side), 0, g.side - 1);
    if (wx + r < g.x0 || wx - r > g.x0 + g.w || wy + r < g.y0 || wy - r > g.y0 + g.h) return -1;
    let best = -1, bestD = r * r;
    for (let gy = gy0; gy <= gy1; gy++) {
      for (let gx = gx0; gx <= gx1; gx++) {
        const cell = gy * g.side + gx;
        for (let k = g.start[cell]; k < g.start[cell + 1]; k++) {
          const i = g.items[k];
          const dx = this.xs[i] - wx, dy = this.ys[i] - wy;
          let d = dx * dx + dy * dy;
          if (this.lit && !this.lit[i]) d *= 4;
          if (d <= bestD) { bestD = d; best = i; }
        }
      }
    }
    return best;
  }

  // ---- drawing -------------------------------------------------------------------------------
  resize() {
    const box = this.canvas.getBoundingClientRect();
    const dpr = Math.min(window.devicePixelRatio || 1, 2);
    const width = Math.round(box.width), height = Math.round(box.height);
    if (width === this.width && height === this.height && dpr === this.dpr) return;
    const first = !this.width || !this.height;
    this.width = width;
    this.height = height;
    this.dpr = dpr;
    this.canvas.width = Math.max(1, Math.round(width * dpr));
    this.canvas.height = Math.max(1, Math.round(height * dpr));
    if (first && this.n) this.fit(); else this.invalidate();
  }

  invalidate() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  pointSize() {
    const base = this.n > 8000 ? 2.2 : this.n > 2000 ? 2.8 : this.n > 300 ? 4 : 6;
    return clamp(base * Math.pow(this.zoom / (this.home || 1), 0.35), base, 14);
  }

  draw() {
    const started = performance.now();
    const { ctx, width, height, dpr } = this;
    if (!width || !height) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    if (!this.n) return;
    const style = getComputedStyle(this.canvas);
    const colours = { fg: style.getPropertyValue("--fg").trim() || "#222", surface: style.getPropertyValue("--surface").trim() || "#fff",
      muted: style.getPropertyValue("--muted").trim() || "#888", accent: style.getPropertyValue("--accent").trim() || "#15c" };
    const size = this.pointSize();
    const scale = this.scale, ox = width / 2 - this.cx * scale, oy = height / 2 - this.cy * scale;
    const margin = size * 2;
    const round = size >= 3.5;
    let drawn = 0;
    const trace = (list, from, to, s) => {
      const h = s / 2;
      for (let k = from; k < to; k++) {
        const i = list[k];
        const x = this.xs[i] * scale + ox, y = this.ys[i] * scale + oy;
        if (x < -margin || y < -margin || x > width + margin || y > height + margin) continue;
        drawn++;
        if (round) { ctx.moveTo(x + h, y); ctx.arc(x, y, h, 0, 6.2832); } else ctx.rect(x - h, y - h, s, s);
      }
    };
    if (this.lit) {
      ctx.globalAlpha = 0.3;
      ctx.fillStyle = colours.muted;
      ctx.beginPath();
      trace(this.order, 0, this.n, size);
      ctx.fill();
      ctx.globalAlpha = 1;
      drawn = 0;
      const hits = Int32Array.from(this.litList);
      const big = size + 4;
      ctx.beginPath();
      for (const i of hits) { const x = this.xs[i] * scale + ox, y = this.ys[i] * scale + oy; ctx.moveTo(x + big / 2 + 1.5, y); ctx.arc(x, y, big / 2 + 1.5, 0, 6.2832); }
      ctx.fillStyle = colours.fg;
      ctx.fill();
      for (const [c] of this.runs) {
        ctx.beginPath();
        const h = big / 2;
        for (const i of hits) {
          if (this.colourOf[i] !== c) continue;
          const x = this.xs[i] * scale + ox, y = this.ys[i] * scale + oy;
          ctx.moveTo(x + h, y); ctx.arc(x, y, h, 0, 6.2832);
        }
        ctx.fillStyle = this.palette[c];
        ctx.fill();
      }
      drawn = this.n;
    } else {
      for (const [c, from, to] of this.runs) {
        ctx.beginPath();
        trace(this.order, from, to, size);
        ctx.fillStyle = this.palette[c];
        ctx.fill();
      }
    }
    this.drawLines(colours, scale, ox, oy);
    if (this.selected >= 0) {
      const x = this.xs[this.selected] * scale + ox, y = this.ys[this.selected] * scale + oy;
      ctx.lineWidth = 3;
      ctx.strokeStyle = colours.surface;
      ctx.beginPath(); ctx.arc(x, y, size + 6, 0, 6.2832); ctx.stroke();
      ctx.lineWidth = 2;
      ctx.strokeStyle = colours.accent;
      ctx.beginPath(); ctx.arc(x, y, size + 6, 0, 6.2832); ctx.stroke();
    }
    if (this.zoom < LABELS_BELOW_ZOOM * (this.home || 1)) this.drawLabels(colours, scale, ox, oy);
    else this.drawTitles(colours, scale, ox, oy, size);
    if (!this.marked && drawn >= this.n) {
      this.marked = true;
      performance.mark("map-points-drawn");
      this.canvas.dataset.drawn = String(this.n);
    }
    const took = performance.now() - started;
    this.drawTimes.push(took);
    if (this.drawTimes.length > 2000) this.drawTimes.splice(0, 1000);
  }

  drawLines(colours, scale, ox, oy) {
    if (!this.lines.length) return;
    const { ctx } = this;
    for (const kind of ["neighbour", "missing"]) {
      ctx.beginPath();
      for (const [i, j, k] of this.lines) {
        if (k !== kind) continue;
        ctx.moveTo(this.xs[i] * scale + ox, this.ys[i] * scale + oy);
        ctx.lineTo(this.xs[j] * scale + ox, this.ys[j] * scale + oy);
      }
      ctx.setLineDash(kind === "missing" ? [6, 4] : []);
      ctx.lineWidth = kind === "missing" ? 2 : 1.2;
      ctx.strokeStyle = kind === "missing" ? colours.accent : colours.muted;
      ctx.stroke();
    }
    ctx.setLineDash([]);
  }

  // Text with a halo of the surface colour, unless it would overlap text already drawn.
  placeText(text, x, y, placed, font, colours) {
    const { ctx } = this;
    ctx.font = font;
    const w = ctx.measureText(text).width;
    if (w + 8 < this.width) x = clamp(x, w / 2 + 4, this.width - w / 2 - 4); // kept whole on screen
    const box = [x - w / 2 - 3, y - 9, x + w / 2 + 3, y + 9];
    if (box[2] < 0 || box[0] > this.width || box[3] < 0 || box[1] > this.height) return;
    for (const b of placed) if (box[0] < b[2] && box[2] > b[0] && box[1] < b[3] && box[3] > b[1]) return;
    placed.push(box);
    ctx.lineWidth = 4;
    ctx.lineJoin = "round";
    ctx.strokeStyle = colours.surface;
    ctx.strokeText(text, x, y);
    ctx.fillStyle = colours.fg;
    ctx.fillText(text, x, y);
  }

  drawLabels(colours, scale, ox, oy) {
    const placed = [];
    this.ctx.textAlign = "center";
    this.ctx.textBaseline = "middle";
    for (const label of this.labels) {
      this.placeText(label.text, label.x * scale + ox, label.y * scale + oy, placed, "600 12px system-ui, sans-serif", colours);
    }
  }

  drawTitles(colours, scale, ox, oy, size) {
    const shown = [];
    for (let i = 0; i < this.n && shown.length <= TITLES_BELOW; i++) {
      const x = this.xs[i] * scale + ox, y = this.ys[i] * scale + oy;
      if (x >= 0 && y >= 0 && x <= this.width && y <= this.height && (!this.lit || this.lit[i])) shown.push(i);
    }
    if (shown.length > TITLES_BELOW) return;
    const placed = [];
    this.ctx.textAlign = "center";
    this.ctx.textBaseline = "middle";
    for (const i of shown) {
      const text = String(this.titles[i] || "").slice(0, 40);
      this.placeText(text, this.xs[i] * scale + ox, this.ys[i] * scale + oy - size - 9, placed, "12px system-ui, sans-serif", colours);
    }
  }

  // ---- pointer, wheel and keys ----------------------------------------------------------------
  bind() {
    const c = this.canvas;
    const local = (event) => { const r = c.getBoundingClientRect(); return { x: event.clientX - r.left, y: event.clientY - r.top }; };
    c.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 && event.pointerType === "mouse") return;
      c.setPointerCapture(event.pointerId);
      const at = local(event);
      // A primary pointer starts a new gesture: any pointer still held from an earlier one
      // lost its pointerup (a busy page, a touch that left the canvas) and would turn this
      // tap into a pinch.
      if (event.isPrimary) this.pointers.clear();
      this.pointers.set(event.pointerId, at);
      this.setHover(-1, at);
      if (this.pointers.size === 1) this.gesture = { kind: "pan", start: at, last: at, moved: false, type: event.pointerType };
      else if (this.pointers.size === 2) {
        const [a, b] = [...this.pointers.values()];
        this.gesture = { kind: "pinch", distance: Math.hypot(a.x - b.x, a.y - b.y), mid: { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 }, moved: true };
      }
    });
    c.addEventListener("pointermove", (event) => {
      const at = local(event);
      if (!this.pointers.has(event.pointerId)) {
        if (event.pointerType === "mouse") this.setHover(this.pointAt(at.x, at.y, 8), at);
        return;
      }
      this.pointers.set(event.pointerId, at);
      const g = this.gesture;
      if (!g) return;
      if (g.kind === "pan" && this.pointers.size === 1) {
        if (!g.moved && Math.hypot(at.x - g.start.x, at.y - g.start.y) > TAP_SLOP) g.moved = true;
        if (g.moved) { this.panBy(at.x - g.last.x, at.y - g.last.y); c.classList.add("dragging"); }
        g.last = at;
      } else if (g.kind === "pinch" && this.pointers.size === 2) {
        const [a, b] = [...this.pointers.values()];
        const distance = Math.hypot(a.x - b.x, a.y - b.y);
        const mid = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
        this.panBy(mid.x - g.mid.x, mid.y - g.mid.y);
        if (g.distance > 0) this.zoomAt(distance / g.distance, mid.x, mid.y);
        g.distance = distance;
        g.mid = mid;
      }
    });
    const release = (event, cancelled) => {
      if (!this.pointers.has(event.pointerId)) return;
      const at = local(event);
      this.pointers.delete(event.pointerId);
      const g = this.gesture;
      c.classList.remove("dragging");
      if (this.pointers.size === 0) {
        this.gesture = null;
        if (!cancelled && g && g.kind === "pan" && !g.moved) {
          const i = this.pointAt(at.x, at.y, g.type === "mouse" ? 8 : 18);
          this.onSelect(i);
        }
      } else if (this.pointers.size === 1) {
        const [only] = [...this.pointers.values()];
        this.gesture = { kind: "pan", start: only, last: only, moved: true, type: event.pointerType };
      }
    };
    c.addEventListener("pointerup", (event) => release(event, false));
    c.addEventListener("pointercancel", (event) => release(event, true));
    c.addEventListener("pointerleave", (event) => { if (event.pointerType === "mouse" && !this.pointers.size) this.setHover(-1, null); });
    c.addEventListener("wheel", (event) => {
      event.preventDefault();
      const at = local(event);
      const delta = event.deltaY * (event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1);
      this.zoomAt(Math.exp(-clamp(delta, -300, 300) * 0.0022), at.x, at.y);
      this.setHover(-1, null);
    }, { passive: false });
    c.addEventListener("dblclick", (event) => { const at = local(event); this.zoomAt(2, at.x, at.y); });
    c.addEventListener("keydown", (event) => {
      const step = 60;
      const keys = {
        "+": () => this.zoomAt(1.5), "=": () => this.zoomAt(1.5), "-": () => this.zoomAt(1 / 1.5), "0": () => this.fit(),
        ArrowLeft: () => this.panBy(step, 0), ArrowRight: () => this.panBy(-step, 0),
        ArrowUp: () => this.panBy(0, step), ArrowDown: () => this.panBy(0, -step),
      };
      if (event.key === "Enter") { // the note nearest the middle of the map
        event.preventDefault();
        this.onSelect(this.pointAt(this.width / 2, this.height / 2, Math.min(this.width, this.height) / 4));
      } else if (keys[event.key] && !event.altKey && !event.ctrlKey && !event.metaKey) { event.preventDefault(); keys[event.key](); }
    });
  }

  setHover(i, at) {
    if (i === this.hovered && i < 0) return;
    this.hovered = i;
    this.onHover(i, at);
  }

  destroy() {
    this.resizer.disconnect();
    this.themer.disconnect();
    if (this.frame) cancelAnimationFrame(this.frame);
  }
}

export function clamp(value, low, high) {
  return Math.min(high, Math.max(low, value));
}
