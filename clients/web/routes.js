// The page's addresses: which screen an address asks for, and which game a deal code names.
// No DOM: an address is anything with a pathname, search and hash (the page's location, or
// a URL).

const DEAL_PREFIXES = { "EH1-N": "easy-harp", "KL1-1": "klondike", "KL1-3": "klondike-3" };

/** The game a deal code names ("KL1-3-…" → "klondike-3"), or null. */
export function gameOfDeal(code) {
  const m = String(code || "").trim().toUpperCase().match(/^([A-Z]{2}\d)-([A-Z0-9])-/);
  return m ? DEAL_PREFIXES[`${m[1]}-${m[2]}`] || null : null;
}

/** What the address asks for: a room (/r/CODE), a deal to race (/d/CODE or ?deal=),
 * rules (/rules[/game]), the lobby (/), or nothing we know; ``where``: the page's address
 * unless given. */
export function route(where = location) {
  const path = where.pathname;
  let m = path.match(/^\/r\/([A-Za-z0-9-]{1,16})\/?$/);
  if (m) return { screen: "room", code: m[1], key: new URLSearchParams(where.search).get("key") };
  const h = where.hash.match(/^#\/room\/([A-Za-z0-9-]+)(\?.*)?$/);
  if (h && path === "/") return { screen: "room", code: h[1], key: new URLSearchParams(h[2] || "").get("key") };
  m = path.match(/^\/rules(?:\/(easy-harp|klondike))?\/?$/);
  if (m) return { screen: "rules", game: m[1] || "easy-harp" };
  m = path.match(/^\/t\/([A-Za-z0-9-]{1,16})\/?$/);
  if (m) return { screen: m[1] === "new" ? "tournament-new" : "tournament", code: m[1], key: new URLSearchParams(where.search).get("key") };
  m = path.match(/^\/d\/([A-Za-z0-9-]{1,32})\/?$/);
  if (m) return { screen: "deal", deal: m[1].toUpperCase() };
  m = path.match(/^\/g\/([A-Za-z0-9]{1,16})\/?$/);
  if (m) return { screen: "replay", id: m[1].toLowerCase() };
  m = path.match(/^\/p\/([^/]{1,200})\/?$/);
  if (m) return { screen: "profile", handle: safeDecode(m[1]) };
  m = path.match(/^\/daily(?:\/(\d{4}-\d{2}-\d{2}))?\/?$/);
  if (m) return { screen: "daily", day: m[1] || null };
  if (/^\/watch\/?$/.test(path)) return { screen: "watch" };
  m = path.match(/^\/tv(?:\/(easy-harp|klondike|klondike-3))?\/?$/);
  if (m) return { screen: "tv", game: m[1] || null };
  if (path === "/" || path === "/index.html") {
    const deal = new URLSearchParams(where.search).get("deal");
    return deal ? { screen: "deal", deal: deal.toUpperCase() } : { screen: "lobby" };
  }
  return { screen: "notfound" };
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
