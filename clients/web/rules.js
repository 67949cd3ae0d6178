// How to play: a page per game (/rules/easy-harp, /rules/klondike), also shown over a room
// from its header or from a refused move's reminder. Its small examples are played here in
// the page, judged by the few rules they need (cards.js); the words come from the
// catalogues.

import { foundationFor, fitsOn, isRun } from "./cards.js";
import { el, renderBoard } from "./board.js";
import { ruleText, t } from "./i18n.js";
import { destination } from "./notation.js";
import { $, showScreen } from "./page.js";
import { state } from "./store.js";

// Sections in reading order: [section id, example id or null]. Title and text are the
// catalogue's rules.<game>.<section>.title / .text (paragraphs split on blank lines).
const SECTIONS = {
  "easy-harp": [
    ["layout", null],
    ["build", null],
    ["one-card", "eh-one-card"],
    ["empty", "eh-empty"],
    ["foundations", "eh-foundations"],
    ["stock", null],
    ["end", null],
    ["score", null],
    ["here", null],
    ["faq", null],
  ],
  klondike: [
    ["layout", null],
    ["build", null],
    ["runs", "kl-runs"],
    ["empty", "kl-empty"],
    ["foundations", "kl-foundations"],
    ["stock", null],
    ["end", null],
    ["score", null],
    ["daily", null],
    ["here", null],
    ["faq", null],
  ],
};

// Which section reminds of a refused move's rule.
const RULE_SECTIONS = {
  "one-card-at-a-time": "one-card",
  "not-a-run": "runs",
  "king-only-on-empty": "empty",
  "build-down-alternating": "build",
  "face-down-card": "build",
  "empty-source": "build",
  "not-enough-cards": "build",
  "same-column": "build",
  "wrong-suit-slot": "foundations",
  "foundation-starts-with-ace": "foundations",
  "foundation-builds-up-in-suit": "foundations",
  "foundation-one-card": "foundations",
  "foundation-to-foundation": "foundations",
  "no-foundation-accepts": "foundations",
  "stock-empty": "stock",
  "nothing-to-undo": "end",
  "undo-limit": "end",
  "game-over": "end",
  "no-auto-finish": "end",
  "auto-finish-not-offered": "end",
  "no-table-destination": "here",
  notation: "here",
};

/** The rules page's game for a room's game ("klondike-3" reads Klondike's). */
export function rulesGame(game) {
  return game === "easy-harp" ? "easy-harp" : "klondike";
}

/** The section id that explains ``rule`` in ``game``'s page. */
export function ruleSection(game, rule) {
  const which = rulesGame(game);
  let section = RULE_SECTIONS[rule] || "here";
  if (which === "easy-harp" && section === "runs") section = "one-card"; // no runs there
  return SECTIONS[which].some(([id]) => id === section) ? section : "here";
}

// ---------------------------------------------------------------------- examples

// A small position: columns ({down: hidden cards bottom first, up: face-up cards}) and
// empty foundations; ``goal`` says when the reader has done what the prompt asks.
const EXAMPLES = {
  "eh-one-card": {
    game: "easy-harp",
    columns: [
      { down: ["QD"], up: ["8S", "7H", "6C"] },
      { down: [], up: ["9D"] },
      { down: [], up: ["7D"] },
      { down: [], up: ["8C"] },
    ],
    foundations: 0,
    goal: (ex) => ex.columns[0].down.length === 0,
  },
  "eh-empty": {
    game: "easy-harp",
    columns: [
      { down: ["5S"], up: ["KH", "QS", "JD"] },
      { down: [], up: [] },
      { down: [], up: ["QC"] },
    ],
    foundations: 0,
    goal: (ex) => ex.columns[0].down.length === 0,
  },
  "eh-foundations": {
    game: "easy-harp",
    columns: [
      { down: [], up: ["AH"] },
      { down: [], up: ["AS"] },
      { down: [], up: ["2H"] },
      { down: [], up: ["AC"] },
    ],
    foundations: 8,
    goal: (ex) => ex.columns.every((c) => c.up.length === 0),
  },
  "kl-runs": {
    game: "klondike",
    columns: [
      { down: ["4C"], up: ["9H", "8C", "7H"] },
      { down: [], up: ["TS"] },
      { down: [], up: ["8D"] },
    ],
    foundations: 0,
    goal: (ex) => ex.columns[0].down.length === 0,
  },
  "kl-empty": {
    game: "klondike",
    columns: [
      { down: [], up: [] },
      { down: ["2D"], up: ["KD", "QC"] },
      { down: [], up: ["QH"] },
    ],
    foundations: 0,
    goal: (ex) => ex.columns[1].down.length === 0,
  },
  "kl-foundations": {
    game: "klondike",
    columns: [
      { down: [], up: ["AH"] },
      { down: [], up: ["2H"] },
      { down: [], up: ["AC"] },
      { down: [], up: ["3D"] },
    ],
    foundations: 4,
    goal: (ex) => ex.foundations.reduce((n, f) => n + f.length, 0) === 3,
  },
};

function freshExample(id) {
  const spec = EXAMPLES[id];
  const harp = spec.game === "easy-harp";
  const slots = spec.foundations || (harp ? 8 : 4);
  return {
    id,
    harp,
    columns: spec.columns.map((c) => ({ down: [...c.down], up: [...c.up] })),
    foundations: Array.from({ length: spec.foundations ? slots : 0 }, () => []),
  };
}

function exampleView(ex) {
  return {
    tableau: ex.columns.map((c) => ({ down: c.down.length, up: c.up })),
    foundations: ex.foundations,
    stock: 0,
    waste: { top: [], count: 0 },
  };
}

/** Judge a move of the example: the rule id it breaks, or null once it is made. */
export function tryExampleMove(ex, from, count, to) {
  const source = from.startsWith("t") ? ex.columns[Number(from.slice(1)) - 1] : null;
  const cards = source ? source.up.slice(source.up.length - count) : [];
  if (!cards.length || cards.length < count) return "empty-source";
  if (to === "f") {
    if (count > 1) return "foundation-one-card";
    const slot = foundationFor(exampleView(ex), cards[0], ex.harp);
    if (slot < 0 || !ex.foundations.length) return "no-foundation-accepts";
    ex.foundations[slot].push(cards[0]);
  } else {
    const target = ex.columns[Number(to.slice(1)) - 1];
    if (target === source) return "same-column";
    const top = target.up[target.up.length - 1];
    const empty = !top && target.down.length === 0;
    if (count > 1) {
      if (ex.harp && !empty) return "one-card-at-a-time";
      if (!isRun(cards)) return "not-a-run";
    }
    if (empty && cards[0][0] !== "K") return "king-only-on-empty";
    if (!empty && !fitsOn(cards[0], top)) return "build-down-alternating";
    target.up.push(...cards);
  }
  source.up.splice(source.up.length - count, count);
  if (!source.up.length && source.down.length) source.up.push(source.down.pop());
  return null;
}

function mountExample(id) {
  const box = el("div", "example");
  box.dataset.example = id;
  box.append(el("h3", null, t(`example.${id}.title`)), el("p", null, t(`example.${id}.prompt`)));
  const board = el("div", "board mini");
  board.setAttribute("aria-label", t("example.board"));
  const status = el("p", "example-status");
  status.setAttribute("role", "status");
  const reset = el("button", "small", t("example.reset"));
  reset.type = "button";
  box.append(board, status, reset);

  let ex = freshExample(id);
  let picked = null; // {pile, count}
  const game = EXAMPLES[id].game;
  const draw = (animate) => {
    renderBoard(board, exampleView(ex), game, { mini: true, animate });
    if (picked) {
      const pile = board.querySelector(`[data-pile="${picked.pile}"]`);
      const ups = [...pile.querySelectorAll(".card.up")];
      for (const c of ups.slice(ups.length - picked.count)) c.classList.add("selected");
    }
  };
  const act = (pile, card) => {
    if (picked) {
      const from = picked;
      picked = null;
      if (pile !== from.pile) {
        const rule = tryExampleMove(ex, from.pile, from.count, destination(pile));
        status.textContent = rule
          ? ruleText(rule)
          : EXAMPLES[id].goal(ex)
            ? t(`example.${id}.done`)
            : t("example.good");
        status.classList.toggle("refused", Boolean(rule));
      }
      draw(true);
      return;
    }
    if (!pile.startsWith("t")) return;
    const node = board.querySelector(`[data-pile="${pile}"]`);
    const ups = [...node.querySelectorAll(".card.up")];
    if (!ups.length) return;
    const index = card ? ups.indexOf(card) : ups.length - 1;
    picked = { pile, count: ups.length - Math.max(index, 0) };
    draw(false);
  };
  board.addEventListener("click", (ev) => {
    const pile = ev.target.closest("[data-pile]");
    const area = ev.target.closest('[data-area="f"]');
    if (pile) act(pile.dataset.pile, ev.target.closest(".card.up"));
    else if (area) act("f", null);
  });
  board.addEventListener("keydown", (ev) => {
    const pile = ev.target.closest("[data-pile]");
    if (!pile) return;
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      act(pile.dataset.pile, null);
    } else if ((ev.key === "ArrowUp" || ev.key === "ArrowDown") && picked) {
      ev.preventDefault();
      const ups = board.querySelectorAll(`[data-pile="${picked.pile}"] .card.up`).length;
      picked.count = Math.max(1, Math.min(ups, picked.count + (ev.key === "ArrowUp" ? 1 : -1)));
      draw(false);
      board.querySelector(`[data-pile="${pile.dataset.pile}"]`).focus();
    }
  });
  reset.addEventListener("click", () => {
    ex = freshExample(id);
    picked = null;
    status.textContent = "";
    draw(false);
  });
  draw(false);
  return box;
}

/** Fill ``body`` with ``game``'s rules; scroll to ``section`` (a section id) if given. */
export function renderRules(body, game, section = null) {
  const which = rulesGame(game);
  body.replaceChildren();
  body.append(el("p", "lead", t(`rules.${which}.lead`)));
  const toc = el("ul", "rules-toc");
  for (const [id] of SECTIONS[which]) {
    const li = el("li");
    const a = el("a", null, t(`rules.${which}.${id}.title`));
    a.href = `#${which}-${id}`;
    li.append(a);
    toc.append(li);
  }
  body.append(toc);
  for (const [id, example] of SECTIONS[which]) {
    const part = el("section", "rules-section");
    part.id = `${which}-${id}`;
    part.append(el("h2", null, t(`rules.${which}.${id}.title`)));
    for (const paragraph of t(`rules.${which}.${id}.text`).split(/\n\n+/)) {
      const lines = paragraph.split("\n");
      if (lines.every((line) => line.startsWith("• "))) {
        const list = el("ul");
        for (const line of lines) list.append(el("li", null, line.slice(2)));
        part.append(list);
      } else {
        part.append(el("p", null, paragraph));
      }
    }
    if (example) part.append(mountExample(example));
    body.append(part);
  }
  if (section) {
    const target = body.querySelector(`#${which}-${section}`);
    if (target) {
      target.classList.add("flash");
      target.scrollIntoView({ block: "start" });
    }
  }
}

// ---------------------------------------------------------------------- the page and the overlay

export function showRulesPage(game, section) {
  showScreen("rules");
  $("rules-close").hidden = true;
  $("rules-back").hidden = false;
  fillRules(game, section);
}

export function fillRules(game, section) {
  const which = rulesGame(game);
  $("rules-title").textContent = t("rules.title", { game: t(`rules.${which}.name`) });
  for (const a of document.querySelectorAll(".rules-tabs a")) {
    if (a.dataset.game === which) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  renderRules($("rules-body"), which, section);
  if (!state.room) document.title = `${$("rules-title").textContent} · samedeal`;
}

/** The rules over the room (the race goes on underneath), at ``rule``'s section. */
export function openRulesOverlay(rule) {
  $("rules").hidden = false;
  $("rules").classList.add("overlay");
  $("rules-close").hidden = false;
  $("rules-back").hidden = true;
  fillRules(state.game || "easy-harp", rule ? ruleSection(state.game, rule) : null);
  $("rules-close").focus();
}

function closeRulesOverlay() {
  $("rules").hidden = true;
  $("rules").classList.remove("overlay");
}

/** Wire the rules over a room: the header's link opens them there, Escape or Close shuts. */
export function setupRulesOverlay() {
  $("rules-link").addEventListener("click", (ev) => {
    if (!state.room) return; // a page of its own from the lobby
    ev.preventDefault();
    openRulesOverlay(null);
  });
  $("rules-close").addEventListener("click", closeRulesOverlay);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && $("rules").classList.contains("overlay") && !$("rules").hidden) closeRulesOverlay();
  });
}
