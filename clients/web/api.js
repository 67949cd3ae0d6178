// The server's HTTP JSON API of finished races and players (protocol/openapi.json), and
// the dates the pages show.

import { currentLang } from "./i18n.js";

/** GET a JSON answer: {ok: true, data} or {ok: false, code, message} (the server's error,
 * or "offline" when it cannot be reached). */
export async function getJson(path) {
  let reply;
  try {
    reply = await fetch(path, { headers: { Accept: "application/json" } });
  } catch {
    return { ok: false, code: "offline", message: "cannot reach the server" };
  }
  let body = null;
  try {
    body = await reply.json();
  } catch {
    // not JSON: an old server, or a proxy's page
  }
  if (reply.ok && body) return { ok: true, data: body };
  return { ok: false, code: (body && body.error) || "server_error", message: (body && body.message) || `HTTP ${reply.status}` };
}

/** A server time (ms since the epoch) as a date and time in the page's language. */
export function formatDate(ms) {
  return new Intl.DateTimeFormat(currentLang(), { dateStyle: "medium", timeStyle: "short" }).format(new Date(ms));
}
