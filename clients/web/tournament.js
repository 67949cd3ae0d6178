// The tournament page (/t/CODE) and the tournament form (/t/new): join, countdown,
// standings, the round being played, watching a player, the host's panel, the audit log;
// during a round, the race view with the standings beside the board. Everything from other
// people goes on the page as text (textContent), never as markup.
//
// It shares the app's one connection (app.js hands its parts in): tournament messages come
// here, the round's room is the app's own room view.

import { el } from "./board.js";
import { currentLang, errorText, formatTime, shownName, t, tn } from "./i18n.js";
import { currentPlayer } from "./identity.js";
import { tableWrap } from "./tables.js";

const GAMES = ["klondike", "klondike-3", "easy-harp"];
const $ = (id) => document.getElementById(id);

function button(id, key, onClick, cls) {
  const b = el("button", cls || null, t(key));
  b.type = "button";
  if (id) b.id = id;
  b.addEventListener("click", onClick);
  return b;
}

function field(key, input) {
  const label = el("label", "field");
  label.append(el("span", null, t(key)), " ", input);
  return label;
}

function input(id, attrs) {
  const node = el("input");
  node.id = id;
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

function select(id, options) {
  const node = el("select");
  node.id = id;
  for (const [value, text] of options) {
    const o = el("option", null, text);
    o.value = value;
    node.append(o);
  }
  return node;
}

function panel(id, titleKey) {
  const div = el("div", "panel");
  div.id = id;
  if (titleKey) div.append(el("h2", null, t(titleKey)));
  return div;
}

/** The tournament page. ``app``: {conn, state (read only), forgetSeat, takeJoined,
 * setTournament, follow, followHidden, showScreen, toast, serverNow, render}. */
export class TournamentPage {
  constructor(app) {
    this.app = app;
    this.code = null;
    this.key = null;
    this.page = null;
    this.you = null;
    this.standings = null; // the last tournament_standings
    this.active = false;
    this.refetching = null;
    this.roundOver = false; // a round ended: the boards refused while it ran are asked for again
    this.section = el("section", "screen");
    this.section.id = "tournament";
    this.section.hidden = true;
    document.querySelector("main").append(this.section);
    this.side = el("div", "tournament-side");
    this.side.id = "t-side";
    this.side.hidden = true;
    const aside = $("side");
    if (aside) aside.prepend(this.side);
    setInterval(() => this.active && this.tick(), 250);
    document.addEventListener("samedeal:lang", () => {
      if (this.active && !this.section.hidden) this.render();
      if (!this.side.hidden) this.renderSide();
    });
  }

  // ------------------------------------------------------------------ identity

  /** Who this browser's player is: identity.js says it on every connection as it opens
   * (made on first use, kept in localStorage); without one (a server that keeps no
   * players, or refused a new one for now) the refusal to show. */
  async identify() {
    await this.app.conn.ensure();
    const me = currentPlayer();
    if (me) return me.player;
    throw { code: "no_identity", message: "no identity" };
  }

  // ------------------------------------------------------------------ opening

  show() {
    this.app.showScreen("tournament");
  }

  /** /t/CODE: open the tournament (identified when the browser has an identity). */
  async open(code, key) {
    this.code = code.toUpperCase();
    this.key = key;
    this.active = true;
    this.show();
    this.section.replaceChildren(el("p", "hint", t("tournament.loading")));
    await this.follow();
  }

  async follow() {
    const conn = this.app.conn;
    try {
      await conn.ensure(); // identified by then, when the browser has an identity
    } catch {
      // a guest: the page only
    }
    const reply = await conn.request({ type: "tournament_open", tournament: this.code, key: this.key || null });
    if (reply.type !== "tournament") {
      this.section.replaceChildren(panelWith("t-missing", errorText(reply.code, reply.message)));
      return;
    }
    this.take(reply);
    if (reply.you.seat) await this.sit(reply.you.seat);
  }

  take(reply) {
    this.page = reply.page;
    this.you = reply.you;
    document.title = `${this.page.settings.name} · samedeal`;
    this.render();
  }

  /** The page again, after a change: at most once a second per viewer, spread out (a
   * change reaches every viewer at once). */
  async refetch() {
    if (this.refetching) return;
    this.refetching = setTimeout(async () => {
      this.refetching = null;
      const reply = await this.app.conn.request({ type: "tournament_open", tournament: this.code, key: this.key || null });
      if (reply.type === "tournament") this.take(reply);
      if (this.roundOver) {
        this.roundOver = false;
        await this.app.followHidden();
      }
    }, 300 + Math.random() * 700);
  }

  /** Messages of the tournament (the rest is the room's): true when handled. */
  onMessage(msg) {
    if (msg.type === "tournament_standings") {
      this.standings = msg;
      this.renderStandingsNow();
      return true;
    }
    if (msg.type === "tournament_seat") {
      this.sit(msg);
      return true;
    }
    if (msg.type !== "tournament_event") return false;
    const d = msg.data;
    if (msg.kind === "announcement") this.app.toast(t("tournament.announcement", { text: d.text }));
    if ((msg.kind === "player_kicked" || msg.kind === "player_banned") && this.you && d.player === this.you.player) {
      this.app.toast(t(msg.kind === "player_kicked" ? "tournament.kicked" : "tournament.banned", { reason: d.reason }));
    }
    if (msg.kind === "round_starting" && this.you && (d.absent || []).includes(this.you.player)) {
      this.app.toast(t("tournament.absent", { n: d.round }));
    }
    if (msg.kind === "round_ended") {
      this.app.toast(t("tournament.round_ended", { n: d.round, deal: d.deal }));
      // its boards may be watched now: a spectator refused them while it ran follows them
      // again, once — as the page is read again (below), spread over a second so that a
      // round's spectators do not all ask at once, and so, most often, after the server has
      // ended the rooms' secret (it does just after telling this; a refusal then is final)
      this.roundOver = true;
    }
    if (msg.kind === "tournament_finished") this.app.toast(t("tournament.finished"));
    if (msg.kind === "player_joined" && this.page) {
      // a join changes the list of players only: no need to read the page again
      // (the standings pushed next show them; a form being filled in is left alone)
      this.page.players.push({ id: d.player, name: d.name, status: "entered", withdrawn_by: null, reason: null, joined_at: 0, joined_round: this.page.round, absences: 0 });
      return true;
    }
    this.refetch();
    return true;
  }

  /** A round starts with this player in it: take the seat; the race view follows. */
  async sit(seat) {
    const conn = this.app.conn;
    if (this.app.state.room) await conn.request({ type: "leave" });
    const reply = await conn.request({ type: "resume", room: seat.room, token: seat.token, last_seq: null });
    if (reply.type !== "joined") {
      this.app.toast(errorText(reply.code, reply.message));
      return;
    }
    this.app.takeJoined(reply, { keepPath: true });
    this.app.setTournament(this.roundInfo(seat.round));
    this.side.hidden = false;
    this.renderSide();
  }

  /** What the room's share text says of the tournament: its name, round ``round`` (the
   * page's own when not given) and page. */
  roundInfo(round) {
    const link = `${location.origin}/t/${encodeURIComponent(this.code)}` + (this.key ? `?key=${encodeURIComponent(this.key)}` : "");
    const name = this.page ? this.page.settings.name : this.code;
    return { id: this.code, name, round: round || (this.page ? this.page.round : 0), link };
  }

  /** Watch a player of the round: their room as a spectator, following their seat. */
  async watch(room, seat) {
    const conn = this.app.conn;
    if (this.app.state.room) await conn.request({ type: "leave" });
    const payload = { type: "join", room, role: "spectator" };
    if (this.key) payload.key = this.key;
    const reply = await conn.request(payload);
    if (reply.type !== "joined") {
      this.app.toast(errorText(reply.code, reply.message));
      return;
    }
    this.app.takeJoined(reply, { keepPath: true });
    this.app.setTournament(this.roundInfo());
    this.side.hidden = false;
    this.renderSide();
    await this.app.follow([seat]);
  }

  /** Back from the room to the tournament page. */
  async back() {
    if (this.app.state.room) {
      await this.app.conn.request({ type: "leave" });
      this.app.forgetSeat();
    }
    this.side.hidden = true;
    this.show();
    this.render();
  }

  // ------------------------------------------------------------------ acts

  async send(payload, errorBox) {
    const reply = await this.app.conn.request({ tournament: this.code, ...payload });
    if (reply.type === "error") {
      const text = errorText(reply.code, reply.message) + (reply.code === "bad_settings" ? ` (${reply.message})` : "");
      if (errorBox) errorBox.textContent = text;
      else this.app.toast(text);
      return null;
    }
    if (errorBox) errorBox.textContent = "";
    return reply;
  }

  async join(name, errorBox) {
    try {
      await this.identify();
    } catch (e) {
      errorBox.textContent = errorText(e.code, e.message);
      return;
    }
    const reply = await this.send({ type: "tournament_join", name, key: this.key || null }, errorBox);
    if (reply) this.take(reply);
  }

  host(act, fields) {
    return this.send({ type: "tournament_host", act, ...(fields || {}) });
  }

  // ------------------------------------------------------------------ the form

  /** /t/new: the form that creates a tournament. */
  async showCreate() {
    this.active = false;
    this.show();
    const form = el("form", "panel");
    form.id = "t-create-form";
    form.append(el("h1", null, t("tournament.create_title")));
    const name = input("t-create-name", { maxlength: "60", required: "" });
    const game = select("t-create-game", GAMES.map((g) => [g, t(`game.${g}`)]));
    const rounds = input("t-create-rounds", { type: "number", min: "1", max: "20", value: "3" });
    const limit = input("t-create-limit", { type: "number", min: "1", max: "120", value: "10" });
    const start = select("t-create-start", [["auto", t("tournament.start_auto")], ["manual", t("tournament.start_manual")]]);
    const pause = input("t-create-pause", { type: "number", min: "10", max: "3600", value: "60" });
    const max = input("t-create-max", { type: "number", min: "2", max: "1000", value: "100" });
    const scoring = select("t-create-scoring", [["points", t("tournament.scoring_points")], ["time", t("tournament.scoring_time")]]);
    const deals = select("t-create-deals", [["winnable", t("tournament.deals_winnable")], ["any", t("tournament.deals_any")]]);
    const priv = input("t-create-private", { type: "checkbox" });
    const privLabel = el("label", "check");
    privLabel.append(priv, " ", el("span", null, t("tournament.private")));
    const error = el("p", "error");
    error.setAttribute("role", "alert");
    const submit = el("button", "primary", t("tournament.create"));
    submit.type = "submit";
    submit.id = "t-create-submit";
    form.append(
      field("tournament.name", name),
      field("lobby.game", game),
      field("tournament.rounds", rounds),
      field("tournament.round_minutes", limit),
      field("tournament.round_start", start),
      field("tournament.pause", pause),
      field("tournament.max_players", max),
      field("tournament.scoring", scoring),
      field("tournament.deals", deals),
      privLabel,
      el("p", "hint", t("tournament.host_need_not_play")),
      submit,
      error,
    );
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const conn = this.app.conn;
      try {
        await this.identify();
      } catch (e) {
        error.textContent = errorText(e.code, e.message);
        return;
      }
      const settings = {
        name: name.value.trim(),
        game: game.value,
        rounds: Number(rounds.value),
        round_time_limit: Math.round(Number(limit.value) * 60),
        round_start: start.value,
        pause: Number(pause.value),
        max_players: Number(max.value),
        scoring: scoring.value,
        deals: deals.value,
        private: priv.checked,
      };
      const reply = await conn.request({ type: "tournament_create", settings });
      if (reply.type !== "tournament") {
        error.textContent = errorText(reply.code, reply.message) + (reply.code === "bad_settings" ? ` (${reply.message})` : "");
        return;
      }
      this.code = reply.page.id;
      const link = new URL(reply.page.link);
      this.key = link.searchParams.get("key");
      history.replaceState(null, "", link.pathname + link.search);
      this.active = true;
      this.take(reply);
    });
    this.section.replaceChildren(form);
    name.focus();
  }

  // ------------------------------------------------------------------ drawing

  isHost() {
    return this.you && (this.you.role === "host" || this.you.role === "co_host");
  }

  nameOf(player) {
    const p = (this.page.players || []).find((x) => x.id === player);
    if (p) return shownName(p.name);
    // the host and co-hosts need not play: they are named by what they are, never by an id
    if (player === this.page.host) return t("tournament.the_host");
    if ((this.page.settings.co_hosts || []).includes(player)) return t("tournament.a_co_host");
    if (player === "@system") return t("tournament.the_server");
    return t("tournament.someone");
  }

  statusText() {
    const page = this.page;
    const s = page.settings;
    const now = this.app.serverNow();
    const parts = [t(`game.${s.game}`)];
    parts.push(t(`tournament.phase.${page.phase}`, { n: page.round, total: s.rounds }));
    const current = page.phase === "round" ? page.rounds[page.rounds.length - 1] : null;
    if (current && now < current.start_at) parts.push(t("tournament.starts_in", { s: Math.ceil((current.start_at - now) / 1000) }));
    else if (current) parts.push(t("tournament.ends_in", { time: formatTime(current.deadline - now) }));
    else if (page.phase === "between" && page.next_round_at) parts.push(t("tournament.next_in", { time: formatTime(page.next_round_at - now) }));
    else if (page.phase === "created" && s.starts_at) parts.push(t("tournament.begins_in", { time: formatTime(s.starts_at - now) }));
    return parts.join(" · ");
  }

  tick() {
    const status = $("t-status");
    if (status && this.page) status.textContent = this.statusText();
    if (!this.side.hidden) this.renderSide();
  }

  render() {
    if (!this.page || !this.active) return;
    const page = this.page;
    const s = page.settings;
    const head = panel("t-head");
    head.append(el("h1", null, s.name));
    const status = el("p", null, this.statusText());
    status.id = "t-status";
    status.setAttribute("role", "status");
    head.append(status);
    const fair = el("p", "hint", page.draw.seed ? t("tournament.fair_seed", { seed: page.draw.seed }) : t("tournament.fair_commitment", { commitment: page.draw.commitment }));
    fair.id = "t-fair";
    head.append(fair);
    if (s.deals === "list") head.append(el("p", "hint", t("tournament.deals_listed")));
    const link = input("t-link", { readonly: "" });
    link.value = page.link;
    head.append(field("tournament.link", link));
    // the host's controls first (a host need not play: their own entry comes after), and
    // no panel left with nothing in it once the tournament is over
    this.section.replaceChildren(head);
    if (this.isHost() && page.phase !== "finished") this.section.append(this.renderHost());
    const you = this.renderYou();
    if (you) this.section.append(you);
    this.section.append(this.renderLive(), this.renderStandings(), this.renderRounds(), this.renderAudit(), this.renderExports());
  }

  /** The reader's own entry: their status, or a way to join — for a host, folded away
   * ("Play in it too"); nothing once the tournament is over and they were not in it. */
  renderYou() {
    const you = this.you || {};
    if (!you.status && this.page.phase === "finished") return null;
    const box = panel("t-you");
    const error = el("p", "error");
    error.setAttribute("role", "alert");
    if (you.status) {
      const key = `tournament.you_${you.status}`;
      box.append(el("p", null, t(key, { reason: you.reason || "" })));
      if (you.status === "entered") box.append(button("t-withdraw", "tournament.withdraw", () => this.send({ type: "tournament_withdraw" })));
      if (you.status === "withdrawn") box.append(button("t-rejoin", "tournament.rejoin", () => this.send({ type: "tournament_rejoin" })));
    } else {
      const name = input("t-join-name", { maxlength: "24", autocomplete: "nickname" });
      name.value = localStorage.getItem("samedeal.name") || "";
      const join = [field("lobby.name", name), button("t-join", "tournament.join", () => this.join(name.value.trim(), error), "primary")];
      if (this.isHost()) {
        const fold = el("details");
        fold.id = "t-host-join";
        fold.append(el("summary", null, t("tournament.host_play_too")), el("p", "hint", t("tournament.host_need_not_play")), ...join);
        box.append(fold);
      } else {
        box.append(...join);
      }
    }
    box.append(error);
    return box;
  }

  renderHost() {
    const box = panel("t-host", "tournament.host_panel");
    const phase = this.page.phase;
    const acts = el("div", "buttons");
    if (phase === "created") acts.append(button("t-start", "tournament.act_start", () => this.host("start"), "primary"));
    if (phase === "between") acts.append(button("t-start-round", "tournament.act_start_round", () => this.host("start_round"), "primary"));
    if (phase === "between") acts.append(button("t-pause", "tournament.act_pause", () => this.host("pause")));
    if (phase === "paused") acts.append(button("t-resume", "tournament.act_resume", () => this.host("resume")));
    if (phase !== "finished") acts.append(button("t-end", "tournament.act_end", () => this.host("end_early"), "danger"));
    box.append(acts);
    const text = el("textarea");
    text.id = "t-announce-text";
    text.rows = 2;
    box.append(field("tournament.announce_text", text), button("t-announce", "tournament.act_announce", () => this.host("announce", { text: text.value })));
    const players = (this.page.players || []).map((p) => [p.id, shownName(p.name)]);
    if (!players.length) return box;
    // two acts, two forms: a player out of the tournament; a round's result struck or back
    const out = el("fieldset", "t-act");
    out.id = "t-remove";
    const who = select("t-act-player", players);
    const reason = input("t-act-reason", { maxlength: "200" });
    const outRow = el("div", "buttons");
    outRow.append(
      button("t-kick", "tournament.act_kick", () => this.host("kick", { player: who.value, reason: reason.value })),
      button("t-ban", "tournament.act_ban", () => this.host("ban", { player: who.value, reason: reason.value }), "danger"),
    );
    out.append(el("legend", null, t("tournament.remove_title")), el("p", "hint", t("tournament.remove_text")), field("tournament.player", who), field("tournament.reason", reason), outRow);
    box.append(out);
    const rounds = (this.page.rounds || []).map((r) => [String(r.number), t("tournament.round_n", { n: r.number })]);
    if (!rounds.length) return box;
    const result = el("fieldset", "t-act");
    result.id = "t-result";
    const whose = select("t-result-player", players);
    const round = select("t-act-round", rounds);
    const why = input("t-result-reason", { maxlength: "200" });
    const resultRow = el("div", "buttons");
    resultRow.append(
      button("t-disqualify", "tournament.act_disqualify", () => this.host("disqualify", { player: whose.value, round: Number(round.value), reason: why.value })),
      button("t-restore", "tournament.act_restore", () => this.host("restore", { player: whose.value, round: Number(round.value) })),
    );
    result.append(el("legend", null, t("tournament.result_title")), field("tournament.player", whose), field("tournament.round", round), field("tournament.reason", why), resultRow);
    box.append(result);
    return box;
  }

  renderLive() {
    const box = panel("t-live");
    const page = this.page;
    const current = page.phase === "round" ? page.rounds[page.rounds.length - 1] : null;
    if (!current) {
      box.hidden = true;
      return box;
    }
    box.append(el("h2", null, t("tournament.round_n", { n: current.number })));
    const live = this.standings && this.standings.live;
    const finished = live ? live.finished : current.results.length;
    box.append(el("p", null, t("tournament.round_live", { n: current.number, finished, players: current.participants.length })));
    const list = el("ul", "t-watch-list");
    for (const room of current.rooms) {
      for (const [player, seat] of Object.entries(room.seats)) {
        const item = el("li", null, this.nameOf(player) + " ");
        item.append(button(null, "tournament.watch", () => this.watch(room.room, seat), "small"));
        list.append(item);
      }
    }
    box.append(list);
    return box;
  }

  tiebreakText() {
    const rules = this.page.scoring;
    const names = rules.tiebreaks.map((b) => t(`tournament.tiebreak.${b.key}`));
    return t(`tournament.scoring_rule.${rules.mode}`, { bonus: rules.win_bonus, penalty: rules.card_penalty_ms / 1000 }) + " " + t("tournament.tiebreaks", { list: names.join(", ") });
  }

  renderStandings() {
    const box = panel("t-standings", "tournament.standings");
    box.append(el("p", "hint", this.tiebreakText()));
    const rows = this.page.standings;
    box.append(this.standingsTable(rows, this.page.scoring, true));
    return box;
  }

  renderStandingsNow() {
    if (!this.page || !this.standings) return;
    // the pushed rows replace the page's top rows; the rest stay as the page had them
    const pushed = new Map(this.standings.top.map((r) => [r.player, r]));
    if (this.standings.you) pushed.set(this.standings.you.player, this.standings.you);
    const rest = this.page.standings.filter((r) => !pushed.has(r.player));
    this.page.standings = [...pushed.values(), ...rest].sort((a, b) => a.rank - b.rank);
    const old = $("t-standings");
    if (old && this.active && !this.section.hidden) old.replaceWith(this.renderStandings());
    const live = $("t-live");
    if (live && this.active && !this.section.hidden) live.replaceWith(this.renderLive());
    if (!this.side.hidden) this.renderSide();
  }

  standingsTable(rows, scoring, full) {
    const table = el("table");
    table.className = "t-standings-table";
    const head = el("tr");
    const cols = ["tournament.col_rank", "tournament.col_player", scoring.mode === "points" ? "tournament.col_points" : "tournament.col_time"];
    if (full) for (const b of scoring.tiebreaks) cols.push(`tournament.tiebreak.${b.key}`);
    for (const key of cols) {
      const th = el("th", null, t(key));
      th.scope = "col";
      head.append(th);
    }
    const thead = el("thead");
    thead.append(head);
    const body = el("tbody");
    const me = this.you && this.you.player;
    for (const r of rows) {
      const tr = el("tr", r.player === me ? "me" : null);
      tr.append(el("td", null, r.rank), el("td", null, shownName(r.name)), el("td", null, scoring.mode === "points" ? r.points : formatTime(r.time_ms)));
      if (full) for (const b of scoring.tiebreaks) tr.append(el("td", null, b.key.endsWith("_ms") ? formatTime(r.tiebreaks[b.key]) : r.tiebreaks[b.key]));
      body.append(tr);
    }
    table.append(thead, body);
    return tableWrap(t("tournament.standings"), table);
  }

  renderRounds() {
    const box = panel("t-rounds", "tournament.rounds_title");
    for (const r of [...this.page.rounds].reverse()) {
      const section = el("div", "t-round");
      const deal = r.deal ? ` · ${r.deal}` : "";
      section.append(el("h3", null, t("tournament.round_n", { n: r.number }) + deal));
      // places written out (shared ones repeat: 1, 1, 3), so not an ordered list's numbers
      const list = el("ul", "t-results");
      for (const res of r.results) {
        const line = el("li", res.disqualified ? "struck" : null);
        const what = res.status === "won" ? formatTime(res.elapsed_ms) : t("tournament.cards_home", { n: res.on_foundations, total: res.total });
        // a race the host's ending stopped is not one that ran out of time
        const status = res.status === "timeout" && r.stopped_early ? t("tournament.stopped") : t(`status.${res.status}`);
        line.append(`${res.place ?? "–"}. ${this.nameOf(res.player)} · ${status} · ${what}`);
        if (res.points !== null && res.points !== undefined) line.append(` · ${tn("tournament.points", res.points)}`);
        if (res.disqualified) line.append(` · ${t("tournament.disqualified", { reason: res.disqualify_reason || "" })}`);
        if (res.game_id) {
          const a = el("a", null, t("tournament.replay"));
          a.href = `/g/${res.game_id}`;
          line.append(" · ", a);
        }
        list.append(line);
      }
      for (const player of r.absent) list.append(el("li", "hint", t("tournament.absent_line", { name: this.nameOf(player) })));
      section.append(list);
      box.append(section);
    }
    return box;
  }

  renderAudit() {
    const box = panel("t-audit", "tournament.audit");
    const list = el("ol");
    for (const a of this.page.audit) {
      const when = new Date(a.at).toLocaleTimeString();
      const parts = [when, this.nameOf(a.actor), t(`tournament.audit_act.${a.act}`)];
      if (a.player) parts.push(this.nameOf(a.player));
      if (a.round) parts.push(t("tournament.round_n", { n: a.round }));
      if (a.reason) parts.push(`“${a.reason}”`);
      list.append(el("li", null, parts.join(" · ")));
    }
    if (!this.page.audit.length) list.append(el("li", "hint", t("tournament.audit_empty")));
    box.append(list);
    return box;
  }

  renderExports() {
    const box = panel("t-exports", "tournament.downloads");
    const key = this.key ? `?key=${encodeURIComponent(this.key)}` : "";
    const base = `/api/tournaments/${encodeURIComponent(this.code)}`;
    const sep = key ? "&" : "?";
    for (const [href, label] of [
      [`${base}/results${key}${sep}format=csv`, "tournament.results_csv"],
      [`${base}/results${key}${sep}format=ndjson`, "tournament.results_ndjson"],
      [`${base}/results${key}`, "tournament.results_json"],
      [`${base}/export${key}`, "tournament.export"],
    ]) {
      const a = el("a", "button-like small", t(label));
      a.href = href;
      box.append(a, " ");
    }
    box.append(el("p", "hint", t("tournament.verify_hint")));
    return box;
  }

  /** Beside the board during a round: the round's top, your place, the standings. */
  renderSide() {
    if (!this.page) return;
    const live = this.standings && this.standings.live;
    const box = el("div");
    box.append(el("h2", null, this.page.settings.name));
    if (live) {
      box.append(el("p", null, t("tournament.round_live", { n: live.round, finished: live.finished, players: live.participants })));
      const list = el("ol", "t-live-top");
      for (const r of live.top) list.append(el("li", r.player === (this.you && this.you.player) ? "me" : null, `${r.place}. ${shownName(r.name)} · ${t(`status.${r.status}`)}`));
      box.append(list);
      if (live.you) box.append(el("p", "me", t("tournament.your_place", { place: live.you.place })));
    }
    const rows = this.standings ? this.standings.top : this.page.standings.slice(0, 10);
    box.append(el("h3", null, t("tournament.standings")), this.standingsTable(rows, this.page.scoring, false));
    if (this.standings && this.standings.you && !rows.some((r) => r.player === this.standings.you.player)) {
      box.append(el("p", "me", t("tournament.your_rank", { rank: this.standings.you.rank })));
    }
    box.append(button("t-back", "tournament.back", () => this.back()));
    this.side.replaceChildren(box);
  }
}

function panelWith(id, text) {
  const div = panel(id);
  div.append(el("p", "error", text));
  return div;
}

/** The lobby's list of public tournaments (upcoming, running) and the way to make one; drawn
 * again in a new language. */
export async function listTournaments(container) {
  const box = el("div", "panel");
  box.id = "tournaments-panel";
  container.append(box);
  let tournaments = null; // null: not known (the list is a nicety: the lobby works without it)
  const draw = () => {
    const list = el("ul");
    list.id = "tournament-list";
    for (const item of tournaments || []) {
      const li = el("li");
      const a = el("a", null, item.name);
      a.href = `/t/${item.id}`;
      const when = item.phase === "created" && item.starts_at ? ` · ${new Date(item.starts_at).toLocaleString(currentLang())}` : "";
      li.append(a, ` · ${t(`game.${item.game}`)} · ${t(`tournament.phase.${item.phase}`, { n: item.round, total: item.rounds })} · ${tn("tournament.players", item.players)}${when}`);
      list.append(li);
    }
    if (tournaments && !tournaments.length) list.append(el("li", "hint", t("tournament.none")));
    const create = el("a", "button-like", t("tournament.create_link"));
    create.href = "/t/new";
    create.id = "t-create-link";
    box.replaceChildren(el("h2", null, t("tournament.lobby_title")), list, create);
  };
  draw();
  document.addEventListener("samedeal:lang", draw);
  try {
    const reply = await fetch("/api/tournaments");
    if (!reply.ok) return;
    tournaments = (await reply.json()).tournaments;
    draw();
  } catch {
    // the list is a nicety: the lobby works without it
  }
}
