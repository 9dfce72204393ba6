// The plugin: registers the search modal, the Related notes and Ask-your-vault panes, the status
// bar item, the commands and the settings tab. Loading does no I/O beyond reading the settings:
// the first question to vaultseek waits for Obsidian's layout to be ready.

import { Notice, Plugin, TAbstractFile, TFile, WorkspaceLeaf } from "obsidian";
import { ChatView, CHAT_VIEW, applyEnvelope, citationRuns } from "./chat";
import { IndexState, LineReader, problemOf, readMissingLinks, VaultseekClient } from "./client";
import { launchOf, startServer } from "./launcher";
import { findFile, headingOf, linkTo, openTarget, RenameLog } from "./navigate";
import { describe, Problem, ProblemError, serverDown } from "./problem";
import { markedWords, markRanges, markRuns, readQuery } from "./query";
import { loadRelated, reasonOf, RelatedView, RELATED_VIEW } from "./related";
import { rowsOf, SearchModal, SearchSession } from "./search";
import { DEFAULT_SETTINGS, readSettings, VaultseekSettings, VaultseekSettingTab } from "./settings";
import { sameFolder, statusText } from "./status";
import { Debounced } from "./timing";
import { defaultTransport, FetchTransport, NodeTransport } from "./transport";

const STATUS_EVERY_MS = 30_000;
const SAVE_SETTLE_MS = 1_500;

export default class VaultseekPlugin extends Plugin {
  settings: VaultseekSettings = { ...DEFAULT_SETTINGS };
  client!: VaultseekClient;
  renames = new RenameLog();
  indexState: IndexState | null = null;
  problem: Problem | null = null;
  private statusEl: HTMLElement | null = null;
  private startedServer = false;
  private saved = new Debounced<string, void>((path) => this.afterSave(path), SAVE_SETTLE_MS);

  async onload(): Promise<void> {
    this.settings = readSettings(await this.loadData());
    this.client = new VaultseekClient(() => this.settings, defaultTransport(), () => this.vaultPath());
    this.registerView(RELATED_VIEW, (leaf) => new RelatedView(leaf, this.client, this.renames));
    this.registerView(CHAT_VIEW, (leaf) => new ChatView(leaf, this.client, this.renames));
    this.addCommand({ id: "search", name: "Search the vault", callback: () => this.openSearch() });
    this.addCommand({ id: "related-notes", name: "Show related notes", callback: () => void this.reveal(RELATED_VIEW) });
    this.addCommand({ id: "ask", name: "Ask your vault", callback: () => void this.reveal(CHAT_VIEW) });
    this.addCommand({ id: "reindex", name: "Re-index the vault", callback: () => void this.reindex() });
    this.addRibbonIcon("search", "vaultseek: search the vault", () => this.openSearch());
    this.statusEl = this.addStatusBarItem();
    this.statusEl.addClass("vaultseek-status", "mod-clickable");
    this.statusEl.addEventListener("click", () => void this.reindex());
    this.showStatus();
    this.addSettingTab(new VaultseekSettingTab(this.app, this));
    this.registerEvent(this.app.workspace.on("file-open", (file: TFile | null) => {
      for (const view of this.views<RelatedView>(RELATED_VIEW)) void view.show(file);
    }));
    this.registerEvent(this.app.vault.on("modify", (file: TAbstractFile) => {
      if (file instanceof TFile && file.extension === "md") void this.saved.call(file.path);
    }));
    this.registerEvent(this.app.vault.on("rename", (file: TAbstractFile, oldPath: string) => {
      this.renames.record(oldPath, file.path);
      for (const view of this.views<RelatedView>(RELATED_VIEW)) view.renamed(oldPath, file.path);
    }));
    this.registerEvent(this.app.vault.on("delete", () => {
      for (const view of this.views<RelatedView>(RELATED_VIEW)) view.render();
    }));
    this.registerInterval(globalThis.setInterval(() => void this.refreshStatus(), STATUS_EVERY_MS) as unknown as number);
    this.app.workspace.onLayoutReady(() => void this.refreshStatus());
  }

  onunload(): void {
    this.saved.cancel();
  }

  async saveSettings(): Promise<void> {
    await this.saveData(this.settings);
    void this.refreshStatus();
  }

  vaultPath(): string | null {
    const adapter = this.app.vault.adapter as { getBasePath?: () => string };
    return typeof adapter.getBasePath === "function" ? adapter.getBasePath() : null;
  }

  /** This vault's folder with symbolic links resolved when the server's differs only by them. */
  private realVaultPath(served: string | null): string | null {
    const vault = this.vaultPath();
    if (!vault || !served) return vault;
    try {
      const fs = require("fs") as typeof import("fs");
      return fs.realpathSync(vault) === fs.realpathSync(served) ? served : vault;
    } catch {
      return vault;
    }
  }

  openSearch(): void {
    new SearchModal(this.app, this.client, this.renames, this.settings.debounceMs, (problem) => this.act(problem)).open();
  }

  /** What choosing a problem does: start the server when allowed, else say how. */
  act(problem: Problem): void {
    if (problem.kind === "down" && this.settings.autoStart) void this.ensureServer();
    else new Notice(describe(problem), 12_000);
  }

  views<T>(type: string): T[] {
    return this.app.workspace.getLeavesOfType(type).map((leaf: WorkspaceLeaf) => leaf.view as unknown as T);
  }

  async reveal(type: string): Promise<void> {
    let leaf = this.app.workspace.getLeavesOfType(type)[0];
    if (!leaf) {
      leaf = this.app.workspace.getRightLeaf(false) as WorkspaceLeaf;
      await leaf.setViewState({ type, active: true });
    }
    this.app.workspace.revealLeaf(leaf);
  }

  async refreshStatus(): Promise<void> {
    try {
      this.indexState = await this.client.readyState();
      this.problem = null;
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      this.problem = error.problem;
      if (error.problem.kind === "down" && this.settings.autoStart) void this.ensureServer();
    }
    this.showStatus();
  }

  showStatus(): void {
    if (!this.statusEl) return;
    const state = this.indexState && !this.problem ? this.indexState : null;
    const { text, tooltip } = statusText(state, this.problem, Date.now(), this.realVaultPath(state?.vault ?? null));
    this.statusEl.setText(text);
    this.statusEl.setAttr("aria-label", tooltip);
    this.statusEl.setAttr("title", tooltip);
  }

  /** Start `vaultseek serve` once per session, when allowed and nothing answers. */
  async ensureServer(): Promise<void> {
    const vault = this.vaultPath();
    if (this.startedServer || !this.settings.autoStart || !vault) return;
    this.startedServer = true;
    const failed = await startServer(launchOf(this.settings.serveCommand, this.settings.serverUrl, this.settings.token, vault));
    if (failed) {
      this.problem = { ...serverDown(this.settings.serverUrl, vault, false), message: `Starting it failed: ${failed}.` };
      this.showStatus();
      return;
    }
    new Notice("vaultseek: starting the server for this vault…");
    for (let tries = 0; tries < 60; tries++) {
      await new Promise((resolve) => globalThis.setTimeout(resolve, 1000));
      try {
        await this.client.indexState();
        await this.refreshStatus();
        return;
      } catch {
        // not up yet
      }
    }
  }

  async reindex(): Promise<void> {
    try {
      this.indexState = this.indexState ? { ...this.indexState, indexing: true } : null;
      this.showStatus();
      await this.client.reindex(false);
      new Notice("vaultseek: indexing the vault");
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      this.act(error.problem);
    }
    globalThis.setTimeout(() => void this.refreshStatus(), 2000);
  }

  /** A note was saved: index the change, then refresh the panes that show it. */
  private async afterSave(path: string): Promise<void> {
    try {
      this.indexState = await this.client.reindex(true);
      this.problem = null;
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      this.problem = error.problem;
    }
    this.showStatus();
    for (const view of this.views<RelatedView>(RELATED_VIEW)) {
      if (view.state.path === path) await view.show(this.app.vault.getAbstractFileByPath(path) as TFile | null);
    }
  }
}

/** The plugin's pure parts, for its tests and benchmark (the bundle is what they exercise). */
export const internals = {
  VaultseekClient, NodeTransport, FetchTransport, LineReader, problemOf, readMissingLinks,
  readQuery, markedWords, markRanges, markRuns, headingOf, RenameLog, Debounced, openTarget, findFile, linkTo,
  SearchSession, SearchModal, rowsOf, RelatedView, loadRelated, reasonOf, ChatView, applyEnvelope,
  citationRuns, statusText, sameFolder, launchOf, startServer, readSettings, DEFAULT_SETTINGS, serverDown, ProblemError,
};
