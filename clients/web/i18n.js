// Message catalogues: every text a player reads comes from /i18n/<lang>.json (the same
// files the terminal client reads). Code holds keys; rule reminders and server errors are
// translated by their ids (rejected.rule, error.code), with the server's English as the
// last resort.

export const LANGUAGES = ["en", "ru", "sv"];
const STORE = "samedeal.lang";

let lang = "en";
let messages = {};
let fallback = {};

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
  if (!Object.keys(fallback).length) fallback = await fetchCatalogue("en");
  messages = code === "en" ? fallback : await fetchCatalogue(code);
  lang = code;
  if (remember) localStorage.setItem(STORE, code);
  document.documentElement.lang = code;
}

export function currentLang() {
  return lang;
}

function lookup(key) {
  return key in messages ? messages[key] : fallback[key];
}

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (m, name) => (params && name in params ? String(params[name]) : m));
}

/** The text for ``key`` with ``{name}`` placeholders filled; a plural entry (an object of
 * CLDR forms) is chosen by ``params.n``. */
export function t(key, params) {
  let text = lookup(key);
  if (text === undefined) return key;
  if (typeof text === "object") {
    const form = new Intl.PluralRules(lang).select(Number(params && params.n) || 0);
    text = text[form] ?? text.other;
  }
  return fill(text, params);
}

/** :func:`t` for a plural entry counted by ``n``. */
export function tn(key, n, params) {
  return t(key, { ...params, n });
}

/** Like :func:`t` for an ordinal entry ("1st of 2"): the form is chosen by ``params.rank``. */
export function tOrdinal(key, params) {
  const entry = lookup(key);
  if (entry === undefined) return key;
  if (typeof entry !== "object") return fill(entry, params);
  const form = new Intl.PluralRules(lang, { type: "ordinal" }).select(Number(params.rank) || 0);
  return fill(entry[form] ?? entry.other, params);
}

export function has(key) {
  return lookup(key) !== undefined;
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

/** A duration in ms as m:ss (h:mm:ss past an hour); "–" when unknown. */
export function formatTime(ms) {
  if (ms === null || ms === undefined || ms < 0) return "–";
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}
