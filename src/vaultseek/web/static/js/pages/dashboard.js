// The study dashboard: time studied, sessions and streaks, a calendar heatmap of the last 90
// days (weeks as columns, weekdays as rows, months named, a legend, every day described in
// text), and the 25 badges with what earns each and how far along you are.
import { api, el, plural } from "../ui.js";

export const title = "Dashboard";

const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LEVEL_NAMES = ["no activity", "a little", "some", "a lot", "the most"];

let root = null;
let parts = {};

export async function mount(container) {
  root = container;
  root.classList.add("dashboard");
  parts.figures = el("div", { class: "dash-figures", id: "dash-figures" });
  parts.heatmap = el("div", { class: "dash-heatmap-wrap", id: "dash-heatmap" });
  parts.badges = el("ul", { class: "dash-badges", id: "dash-badges" });
  parts.badgeSummary = el("p", { class: "muted", id: "dash-badge-summary" });
  parts.status = el("p", { class: "muted", role: "status", "aria-live": "polite" });
  root.append(
    el("h1", { text: "Dashboard" }), parts.status, parts.figures,
    el("section", { class: "card dash-section", "aria-labelledby": "dash-activity-title" },
      el("h2", { id: "dash-activity-title", text: "Activity, last 90 days" }), parts.heatmap),
    el("section", { class: "card dash-section", "aria-labelledby": "dash-badges-title" },
      el("h2", { id: "dash-badges-title", text: "Badges" }), parts.badgeSummary, parts.badges));
}

export function show() {
  load();
}

async function load() {
  parts.status.textContent = "Loading…";
  let d;
  try {
    d = await api("/api/study/dashboard");
  } catch (error) {
    parts.status.textContent = `Could not load the dashboard: ${error.message}`;
    return;
  }
  parts.status.textContent = "";
  renderFigures(d);
  renderHeatmap(d.heatmap);
  renderBadges(d.badges);
}

function duration(minutes) {
  const total = Math.round(minutes);
  if (total < 60) return plural(total, "minute", "minutes");
  const hours = Math.floor(total / 60);
  const rest = total % 60;
  return rest ? `${plural(hours, "hour", "hours")} ${plural(rest, "minute", "minutes")}` : plural(hours, "hour", "hours");
}

function figure(id, value, label) {
  return el("div", { class: "dash-figure card", id }, el("strong", { text: value }), el("span", { class: "muted", text: label }));
}

function renderFigures(d) {
  const average = d.totals.average_score;
  parts.figures.replaceChildren(
    figure("dash-minutes", duration(d.study_minutes), "studied"),
    figure("dash-sessions", plural(d.sessions, "session", "sessions"), "of study"),
    figure("dash-streak", plural(d.streak.current, "day", "days"), `current streak · longest ${plural(d.streak.longest, "day", "days")}`),
    figure("dash-quizzes", plural(d.totals.quizzes, "quiz", "quizzes"), average === null ? "finished" : `finished · average ${Math.round(average * 100)}%`),
    figure("dash-reviews", plural(d.totals.reviews, "review", "reviews"), "of flashcards"),
    figure("dash-lessons", plural(d.totals.lessons, "lesson", "lessons"), "opened"));
}

// -- the calendar heatmap --------------------------------------------------------------------
function parseDay(iso) {
  const [y, m, d] = iso.split("-").map(Number);
  return new Date(y, m - 1, d);
}

function levelsOf(counts) {
  const active = counts.filter((c) => c > 0).sort((a, b) => a - b);
  const cut = (q) => active[Math.min(active.length - 1, Math.floor(q * active.length))];
  const bounds = active.length ? [cut(0.25), cut(0.5), cut(0.75)] : [];
  return (count) => (count <= 0 ? 0 : 1 + bounds.filter((b) => count > b).length);
}

export function weeksOf(days) {
  // Columns of seven rows (Monday first); days before the first and after the last are null.
  const first = parseDay(days[0].date);
  const pad = (first.getDay() + 6) % 7;
  const cells = [...Array(pad).fill(null), ...days];
  while (cells.length % 7) cells.push(null);
  const weeks = [];
  for (let i = 0; i < cells.length; i += 7) weeks.push(cells.slice(i, i + 7));
  return weeks;
}

function renderHeatmap(days) {
  if (!days || !days.length) {
    parts.heatmap.replaceChildren(el("p", { class: "muted", text: "No activity yet." }));
    return;
  }
  const level = levelsOf(days.map((d) => d.count));
  const weeks = weeksOf(days);
  const monthName = (date) => date.toLocaleDateString(undefined, { month: "short" });
  const longDate = (date) => date.toLocaleDateString(undefined, { weekday: "long", day: "numeric", month: "long", year: "numeric" });
  // Month labels: the first column is labelled with its month; after it, the column holding
  // the 1st of a month starts that month's label, which spans the columns up to the next.
  const monthRow = el("tr", {}, el("td", { class: "dash-corner" }));
  let previous = null;
  let span = null;
  for (const [i, week] of weeks.entries()) {
    const firstOfMonth = week.find((d) => d && d.date.endsWith("-01"));
    const day = i === 0 ? week.find(Boolean) : firstOfMonth;
    const month = day ? monthName(parseDay(day.date)) : previous;
    if (month !== previous) {
      span = el("th", { scope: "colgroup", colspan: "1", class: "dash-month" }, el("span", { text: month }));
      monthRow.append(span);
      previous = month;
    } else {
      span.setAttribute("colspan", String(Number(span.getAttribute("colspan")) + 1));
    }
  }
  // A label over a single column would run into the next month's: the first one then stays blank.
  const firstLabel = monthRow.children[1];
  if (firstLabel && monthRow.children.length > 2 && firstLabel.getAttribute("colspan") === "1") firstLabel.firstChild.textContent = "";
  const rows = WEEKDAYS.map((name, r) => el("tr", {},
    el("th", { scope: "row", class: "dash-weekday" }, el("span", { "aria-hidden": "true", text: r % 2 === 0 ? name : "" }),
      el("span", { class: "dash-sr", text: name })),
    ...weeks.map((week) => {
      const day = week[r];
      if (!day) return el("td", { class: "dash-day dash-out", "aria-hidden": "true" });
      const date = parseDay(day.date);
      const text = `${longDate(date)}: ${plural(day.count, "activity", "activities")}`;
      return el("td", { class: `dash-day l${level(day.count)}`, title: text, dataset: { date: day.date, count: String(day.count) } },
        el("span", { class: "dash-sr", text }));
    })));
  const active = days.filter((d) => d.count > 0);
  const total = active.reduce((sum, d) => sum + d.count, 0);
  const busiest = active.reduce((best, d) => (!best || d.count > best.count ? d : best), null);
  const summary = active.length
    ? `${plural(total, "activity", "activities")} on ${plural(active.length, "day", "days")} of the last ${days.length}; busiest: ${longDate(parseDay(busiest.date))} (${plural(busiest.count, "activity", "activities")}).`
    : `No activity in the last ${days.length} days.`;
  const table = el("table", { class: "dash-heatmap", id: "dash-heatmap-table" },
    el("caption", { class: "dash-sr", text: `Study activity per day, weeks as columns and weekdays as rows. ${summary}` }),
    el("thead", {}, monthRow), el("tbody", {}, ...rows));
  const legend = el("div", { class: "dash-legend", id: "dash-legend", "aria-hidden": "true" },
    el("span", { text: "Less" }), ...LEVEL_NAMES.map((name, i) => el("span", { class: `dash-swatch l${i}`, title: name })), el("span", { text: "More" }));
  parts.heatmap.replaceChildren(el("p", { class: "dash-heatmap-summary", id: "dash-heatmap-summary", text: summary }),
    el("div", { class: "dash-heatmap-scroll" }, table), legend);
}

// -- badges -------------------------------------------------------------------------------------
function renderBadges(badges) {
  const earned = badges.filter((b) => b.earned).length;
  parts.badgeSummary.textContent = `${earned} of ${plural(badges.length, "badge", "badges")} earned. Each is earned from what you actually do in the study hub.`;
  parts.badges.replaceChildren(...badges.map((b) => {
    const { current, target, unit } = b.progress;
    const progressText = b.earned ? "Earned" : `${current} of ${plural(target, unit[0], unit[1])}`;
    return el("li", { class: `card dash-badge${b.earned ? " earned" : ""}`, dataset: { badge: b.id } },
      el("div", { class: "dash-badge-head" },
        el("span", { class: "dash-badge-icon", "aria-hidden": "true", text: b.earned ? "★" : "☆" }),
        el("h3", { text: b.name })),
      el("p", { class: "dash-badge-how", text: b.description }),
      el("progress", { max: String(target), value: String(current), "aria-label": `${b.name}: ${progressText}` }),
      el("p", { class: "dash-badge-progress muted", text: progressText }));
  }));
}
