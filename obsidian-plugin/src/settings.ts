// The plugin's settings and their tab: where vaultseek answers, its token, and whether the
// plugin may start it.

import { App, PluginSettingTab, Setting } from "obsidian";
import type VaultseekPlugin from "./main";
import { describe, ProblemError } from "./problem";

export interface VaultseekSettings {
  serverUrl: string;
  token: string;
  autoStart: boolean;
  serveCommand: string;
  debounceMs: number;
}

export const DEFAULT_SETTINGS: VaultseekSettings = {
  serverUrl: "http://127.0.0.1:8765",
  token: "",
  autoStart: false,
  serveCommand: "vaultseek",
  debounceMs: 120,
};

/** Stored settings over the defaults; a value of the wrong type falls back to its default. */
export function readSettings(stored: unknown): VaultseekSettings {
  const settings = { ...DEFAULT_SETTINGS };
  if (!stored || typeof stored !== "object") return settings;
  const given = stored as Record<string, unknown>;
  for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof VaultseekSettings)[]) {
    if (typeof given[key] === typeof DEFAULT_SETTINGS[key]) (settings as Record<string, unknown>)[key] = given[key];
  }
  settings.debounceMs = Math.min(1000, Math.max(0, Math.round(settings.debounceMs)));
  return settings;
}

export class VaultseekSettingTab extends PluginSettingTab {
  constructor(app: App, private readonly plugin: VaultseekPlugin) {
    super(app, plugin);
  }

  display(): void {
    const { containerEl } = this;
    containerEl.empty();
    const settings = this.plugin.settings;
    const save = async () => {
      await this.plugin.saveSettings();
    };
    new Setting(containerEl)
      .setName("Server URL")
      .setDesc("Where `vaultseek serve` (or the daemon) answers, on this machine.")
      .addText((text) => text.setPlaceholder(DEFAULT_SETTINGS.serverUrl).setValue(settings.serverUrl).onChange(async (value) => {
        settings.serverUrl = value.trim() || DEFAULT_SETTINGS.serverUrl;
        await save();
      }));
    new Setting(containerEl)
      .setName("Token")
      .setDesc("The token in the file given to `vaultseek serve --token-file` (empty when it runs without one).")
      .addText((text) => {
        text.inputEl.type = "password";
        text.setValue(settings.token).onChange(async (value) => {
          settings.token = value.trim();
          await save();
        });
      });
    new Setting(containerEl)
      .setName("Start vaultseek when it is not running")
      .setDesc("Allow the plugin to run `vaultseek serve` on this vault (with the URL's port and this token) when nothing answers.")
      .addToggle((toggle) => toggle.setValue(settings.autoStart).onChange(async (value) => {
        settings.autoStart = value;
        await save();
      }));
    new Setting(containerEl)
      .setName("vaultseek command")
      .setDesc("The program to start (a full path if Obsidian does not find it on its PATH).")
      .addText((text) => text.setValue(settings.serveCommand).onChange(async (value) => {
        settings.serveCommand = value.trim() || DEFAULT_SETTINGS.serveCommand;
        await save();
      }));
    new Setting(containerEl)
      .setName("Search delay")
      .setDesc("Milliseconds after the last keystroke before the search box asks (120 by default).")
      .addText((text) => text.setValue(String(settings.debounceMs)).onChange(async (value) => {
        const ms = Number(value);
        if (Number.isFinite(ms)) {
          settings.debounceMs = Math.min(1000, Math.max(0, Math.round(ms)));
          await save();
        }
      }));
    const check = new Setting(containerEl).setName("Connection").setDesc("Ask the server now.");
    check.addButton((button) => button.setButtonText("Check").onClick(async () => {
      try {
        const state = await this.plugin.client.indexState();
        check.setDesc(`Connected: ${state.files.toLocaleString("en")} files indexed in ${state.vault}.`);
      } catch (error) {
        check.setDesc(error instanceof ProblemError ? describe(error.problem) : String(error));
      }
    }));
  }
}
