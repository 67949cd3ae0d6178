// The page's addresses: which screen each asks for, and which game a deal code names.

import assert from "node:assert/strict";
import test from "node:test";
import { gameOfDeal, route } from "../../clients/web/routes.js";

const at = (address) => route(new URL(address, "https://example.test"));

test("a room, with a private room's key; the old #/room/ form too", () => {
  assert.deepEqual(at("/r/K7QF-2M"), { screen: "room", code: "K7QF-2M", key: null });
  assert.deepEqual(at("/r/k7qf-2m/?key=s3cret"), { screen: "room", code: "k7qf-2m", key: "s3cret" });
  assert.deepEqual(at("/#/room/K7QF-2M?key=abc"), { screen: "room", code: "K7QF-2M", key: "abc" });
  assert.equal(at("/r/THIS-CODE-IS-FAR-TOO-LONG").screen, "notfound");
});

test("a shared deal, by path or by ?deal=, in capitals", () => {
  assert.deepEqual(at("/d/kl1-3-aaaaaaf"), { screen: "deal", deal: "KL1-3-AAAAAAF" });
  assert.deepEqual(at("/?deal=eh1-n-aaaaaaf"), { screen: "deal", deal: "EH1-N-AAAAAAF" });
  assert.deepEqual(at("/"), { screen: "lobby" });
  assert.deepEqual(at("/index.html"), { screen: "lobby" });
});

test("rules, tournaments, replays, players, the daily pages, watching and TV", () => {
  assert.deepEqual(at("/rules"), { screen: "rules", game: "easy-harp" });
  assert.deepEqual(at("/rules/klondike"), { screen: "rules", game: "klondike" });
  assert.deepEqual(at("/t/new"), { screen: "tournament-new", code: "new", key: null });
  assert.deepEqual(at("/t/AB12?key=k"), { screen: "tournament", code: "AB12", key: "k" });
  assert.deepEqual(at("/g/AbC123"), { screen: "replay", id: "abc123" });
  assert.deepEqual(at("/p/%D0%94%D0%B0%D0%BD%D0%B0"), { screen: "profile", handle: "Дана" });
  assert.deepEqual(at("/p/%E0%A4%A"), { screen: "profile", handle: "%E0%A4%A" }); // not decodable: as typed
  assert.deepEqual(at("/daily"), { screen: "daily", day: null });
  assert.deepEqual(at("/daily/2026-01-12"), { screen: "daily", day: "2026-01-12" });
  assert.deepEqual(at("/watch"), { screen: "watch" });
  assert.deepEqual(at("/tv"), { screen: "tv", game: null });
  assert.deepEqual(at("/tv/klondike-3"), { screen: "tv", game: "klondike-3" });
});

test("anything else is no page of ours", () => {
  for (const address of ["/nope", "/rules/spider", "/daily/12-01-2026", "/tv/spider", "/r/"]) {
    assert.equal(at(address).screen, "notfound", address);
  }
});

test("a deal code names its game by its prefix, whatever its case or spaces", () => {
  assert.equal(gameOfDeal("EH1-N-AAAAAAF"), "easy-harp");
  assert.equal(gameOfDeal(" kl1-1-aaaaaaf "), "klondike");
  assert.equal(gameOfDeal("KL1-3-AAAAAAF"), "klondike-3");
  assert.equal(gameOfDeal("KL1-9-AAAAAAF"), null);
  assert.equal(gameOfDeal("nonsense"), null);
  assert.equal(gameOfDeal(null), null);
});
