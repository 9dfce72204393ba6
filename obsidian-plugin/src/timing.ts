// A debounced call whose result every caller shares: each call restarts the wait, and all the
// callers of one burst get the result of the last one (typing "sta", "star", "start" quickly
// is one search, for "start"). An answer that arrives after a newer query was sent is never
// handed out: its callers get the newer answer, so a list can never go back to an older query.

type Waiter<R> = { resolve: (value: R) => void; reject: (error: unknown) => void };

export class Debounced<A, R> {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private waiting: Waiter<R>[] = [];
  private fired = 0;
  private latest: Promise<R> | null = null;

  constructor(private readonly run: (arg: A) => Promise<R>, public waitMs: number) {}

  call(arg: A): Promise<R> {
    if (this.timer !== null) clearTimeout(this.timer);
    const result = new Promise<R>((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.timer = setTimeout(() => this.fire(arg), this.waitMs);
    return result;
  }

  private fire(arg: A): void {
    this.timer = null;
    const waiters = this.waiting;
    this.waiting = [];
    const generation = ++this.fired;
    const running = this.run(arg);
    this.latest = running;
    const settle = (ok: boolean, value: unknown) => {
      if (generation !== this.fired && this.latest) {
        const newer = this.latest;
        for (const w of waiters) newer.then(w.resolve, w.reject);
      } else if (this.timer !== null) {
        this.waiting.push(...waiters); // a newer burst is waiting to fire
      } else {
        for (const w of waiters) (ok ? w.resolve(value as R) : w.reject(value));
      }
    };
    running.then((value) => settle(true, value), (error) => settle(false, error));
  }

  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
