// The page's language: every text a player reads comes from /i18n/<lang>.json (the same
// files the terminal client reads), loaded here into a Catalogue (messages.js, which fills
// and counts the texts). Code holds keys; rule reminders and server errors are translated
// by their ids (rejected.rule, error.code), with the server's English as the last resort.

import { Catalogue } from "./messages.js";

export { formatTime } from "./messages.js";

export const LANGUAGES = ["en", "ru", "sv"];
const STORE = "samedeal.lang";

let catalogue = new Catalogue("en", {});
let english = null; // English's entries, fetched once: behind every other language's

/** The language to start in: the one chosen before, else the browser's first we speak. */
export function detectLang() {
  const saved = localStorage.getItem(STORE);
  if (LANGUAGES.includes(saved)) return saved;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return "en";
}

async function fetchCatalogue(code) {
  const reply = await fetch(`/i18n/${code}.json`);
  if (!reply.ok) throw new Error(`no catalogue ${code}`);
  return reply.json();
}

/** Load a language (and English beside it for any key it lacks); remember the choice. */
export async function setLang(code, remember = false) {
  if (!LANGUAGES.includes(code)) code = "en";
  if (!english) english = await fetchCatalogue("en");
  useCatalogue(code, code === "en" ? english : await fetchCatalogue(code), english);
  if (remember) localStorage.setItem(STORE, code);
  document.documentElement.lang = code;
}

/** Speak ``lang`` from these entries (``fallback``: English's): what :func:`setLang` does
 * once it has them, and how the unit tests give them from the files. */
export function useCatalogue(lang, messages, fallback) {
  catalogue = new Catalogue(lang, messages, fallback);
}

export function currentLang() {
  return catalogue.lang;
}

/** The text for ``key`` in the page's language (:meth:`Catalogue.t`). */
export function t(key, params) {
  return catalogue.t(key, params);
}

/** :func:`t` for a plural entry counted by ``n``. */
export function tn(key, n, params) {
  return catalogue.tn(key, n, params);
}

/** :func:`t` for an ordinal entry ("1st of 2"), by ``params.rank``. */
export function tOrdinal(key, params) {
  return catalogue.tOrdinal(key, params);
}

export function has(key) {
  return catalogue.has(key);
}

/** A player's name as the page shows it: the server's stand-ins for a player with no
 * name ("Player 3", "Player", "deleted player") in the page's language; any other name
 * as it is. */
export function shownName(name) {
  const m = /^Player(?: (\d+))?$/.exec(name || "");
  if (m) return m[1] ? t("players.unnamed_n", { n: m[1] }) : t("players.unnamed");
  if (name === "deleted player") return t("replay.deleted_player");
  return name;
}

/** A refused move's reminder, by its rule id. */
export function ruleText(rule, english) {
  return has(`rule.${rule}`) ? t(`rule.${rule}`) : english || rule;
}

/** A server error, by its code. */
export function errorText(code, english) {
  return has(`error.${code}`) ? t(`error.${code}`) : english || code;
}

/** Fill every element under ``root`` that names a key: ``data-i18n`` (text),
 * ``data-i18n-title``, ``data-i18n-placeholder``, ``data-i18n-label`` (aria-label). */
export function translateDom(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of root.querySelectorAll("[data-i18n-title]")) node.title = t(node.dataset.i18nTitle);
  for (const node of root.querySelectorAll("[data-i18n-placeholder]")) {
    node.placeholder = t(node.dataset.i18nPlaceholder);
  }
  for (const node of root.querySelectorAll("[data-i18n-label]")) {
    node.setAttribute("aria-label", t(node.dataset.i18nLabel));
  }
}
