// A message catalogue as a value: one language's entries, with English's behind them for
// any key it lacks; a key's text with its {name} placeholders filled; plural and ordinal
// forms chosen by CLDR's rules (Intl.PluralRules); a duration as the pages write it. No DOM
// and no fetch: i18n.js loads the catalogues and keeps the page's language.

/** ``text`` with each ``{name}`` replaced by ``params.name`` (left as it is when absent). */
export function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (m, name) => (params && name in params ? String(params[name]) : m));
}

/** One language's messages, as the page and the unit tests use them. */
export class Catalogue {
  /** ``messages``: the language's entries (key → text, or → {one, few, …} for a plural);
   * ``fallback``: English's, for a key the language lacks. */
  constructor(lang, messages, fallback = messages) {
    this.lang = lang;
    this.messages = messages;
    this.fallback = fallback;
  }

  lookup(key) {
    return key in this.messages ? this.messages[key] : this.fallback[key];
  }

  has(key) {
    return this.lookup(key) !== undefined;
  }

  /** The text for ``key`` with ``{name}`` placeholders filled; a plural entry (an object of
   * CLDR forms) is chosen by ``params.n``. An unknown key is its own text. */
  t(key, params) {
    let text = this.lookup(key);
    if (text === undefined) return key;
    if (typeof text === "object") {
      const form = new Intl.PluralRules(this.lang).select(Number(params && params.n) || 0);
      text = text[form] ?? text.other;
    }
    return fill(text, params);
  }

  /** :meth:`t` for a plural entry counted by ``n``. */
  tn(key, n, params) {
    return this.t(key, { ...params, n });
  }

  /** Like :meth:`t` for an ordinal entry ("1st of 2"): the form is chosen by ``params.rank``. */
  tOrdinal(key, params) {
    const entry = this.lookup(key);
    if (entry === undefined) return key;
    if (typeof entry !== "object") return fill(entry, params);
    const form = new Intl.PluralRules(this.lang, { type: "ordinal" }).select(Number(params.rank) || 0);
    return fill(entry[form] ?? entry.other, params);
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
