// The shipped message catalogues (clients/web/i18n/<lang>.json), read from their files for
// the unit tests.

import { readFileSync } from "node:fs";
import { useCatalogue } from "../../clients/web/i18n.js";
import { Catalogue } from "../../clients/web/messages.js";

const I18N = new URL("../../clients/web/i18n/", import.meta.url);

/** A language's entries as shipped. */
export function entries(lang) {
  return JSON.parse(readFileSync(new URL(`${lang}.json`, I18N), "utf-8"));
}

/** The catalogue of ``lang`` as the page builds it: English's entries behind. */
export function catalogue(lang) {
  return new Catalogue(lang, entries(lang), entries("en"));
}

/** Make ``lang`` the page's language for the modules that write text (i18n.js's t, tn, …). */
export function speak(lang) {
  useCatalogue(lang, entries(lang), entries("en"));
}
