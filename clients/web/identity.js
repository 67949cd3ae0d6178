// The player's identity in the browser: a device account made silently the first time
// (racing friends needs no sign-up), kept in localStorage, said on every connection right
// after hello (net.js calls onWelcome). The "You" panel shows the name and the handle,
// shows a new recovery code once, moves an identity here with a code, and deletes it.
// The secret leaves localStorage only in the identify message: never in a URL, on the
// page, or in a log.

import { el } from "./board.js";
import { errorText, t } from "./i18n.js";

const KEY = "samedeal.identity"; // {player, secret}
const CODE = "samedeal.recovery"; // a new recovery code, kept for this tab until noted
const $ = (id) => document.getElementById(id);

let conn = null;
let me = null; // {player, name, handle, created_at}: who the server last said this player is
let guest = false; // the server keeps no players
let refused = null; // the error a new player was refused with (rate_limited: too many from here)
let deleted = false; // deleted in this page: no new identity until the next visit
let confirming = false;
let nameEdited = false; // the lobby's name field changed: the player's name follows it
const notes = { status: "", name: "", handle: "", recover: "" };

function kept() {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) || "null");
    return v && typeof v.player === "string" && typeof v.secret === "string" ? v : null;
  } catch {
    return null;
  }
}

function keep(reply) {
  localStorage.setItem(KEY, JSON.stringify({ player: reply.player, secret: reply.secret }));
  if (reply.recovery_code) sessionStorage.setItem(CODE, reply.recovery_code);
}

function took(reply) {
  me = { player: reply.player, name: reply.name, handle: reply.handle, created_at: reply.created_at };
  guest = false;
  refused = null;
}

/** The identified player ({player, name, handle, created_at}), or null (a guest, or not
 * yet known). */
export function currentPlayer() {
  return me;
}

/** Why this device has no player although the server keeps players: the refusal of
 * ``new_player`` ({code, message}; ``rate_limited``: too many new players from this
 * address this hour), or null. The page says so wherever being a guest matters. */
export function identityRefusal() {
  return refused;
}

/** Ask again for a player (after a refusal): on the live connection. */
export async function retryIdentity() {
  if (!conn) return;
  const ws = await conn.ensure();
  await identifyOn(conn, ws);
}

/** The id of the player this device keeps (before the server has said who they are), or
 * null: asks about the player's own results need no secret. */
export function keptPlayerId() {
  const mine = kept();
  return mine ? mine.player : null;
}

let turn = Promise.resolve(); // one connection identifies at a time: never two new players

/** Say who this connection's player is, right after welcome: the kept identity, or a new
 * one when none is kept or the server no longer knows it (its database was reset, or the
 * identity moved to another device). Never throws: a refusal leaves the connection a
 * guest, and play goes on. */
export function identifyOn(connection, ws) {
  // a socket that dies mid-way never answers: after a few seconds play goes on as a guest
  const limit = () => new Promise((resolve) => setTimeout(resolve, 5000));
  turn = turn.then(() => Promise.race([identify(connection, ws), limit()]));
  return turn;
}

async function identify(connection, ws) {
  try {
    const mine = kept();
    if (mine) {
      const reply = await connection.request({ type: "identify", player: mine.player, secret: mine.secret }, ws);
      if (reply.type === "identity") {
        took(reply);
        await followName(connection, ws);
        return;
      }
      if (reply.code === "no_records") guest = true;
      if (reply.code !== "bad_identity") return;
      localStorage.removeItem(KEY);
      me = null;
    }
    if (deleted) return;
    const name = ($("name").value || localStorage.getItem("samedeal.name") || "").trim();
    const reply = await connection.request({ type: "new_player", name }, ws);
    if (reply.type === "identity") {
      keep(reply);
      took(reply);
      await followName(connection, ws); // typed while the server was answering
    } else if (reply.code === "no_records") {
      guest = true;
    } else {
      refused = { code: reply.code, message: reply.message }; // said, never a silent guest
    }
  } catch {
    // the socket went away: the next connection tries again
  } finally {
    render();
    document.dispatchEvent(new Event("samedeal:identity")); // who the player is, or why not
  }
}

/** Send an identity request on the live connection; the reply, or an error reply. */
async function ask(payload) {
  try {
    return await conn.request(payload);
  } catch (e) {
    return { type: "error", code: e.code || "offline", message: e.message };
  }
}

function noted(field, reply, okText) {
  if (reply.type === "identity") {
    took(reply);
    notes[field] = okText;
    return true;
  }
  notes[field] = errorText(reply.code, reply.message);
  return false;
}

async function saveName(ev) {
  ev.preventDefault();
  const name = $("you-name").value.trim();
  noted("name", await ask({ type: "rename", name }), t("you.saved"));
  render();
}

async function saveHandle(ev) {
  ev.preventDefault();
  const handle = $("you-handle").value.trim();
  noted("handle", await ask({ type: "set_handle", handle: handle || null }), t("you.saved"));
  render();
}

async function recover(ev) {
  ev.preventDefault();
  const code = $("you-recover-code").value.trim();
  if (!code) return;
  const reply = await ask({ type: "recover", code });
  if (noted("recover", reply, t("you.recover_done"))) {
    keep(reply); // the new secret, and the new recovery code to note
    deleted = false;
    $("you-recover-code").value = "";
  }
  render();
}

async function forget() {
  const reply = await ask({ type: "forget_me" });
  confirming = false;
  if (reply.type === "ok") {
    localStorage.removeItem(KEY);
    sessionStorage.removeItem(CODE);
    me = null;
    deleted = true;
    notes.status = t("you.deleted");
  } else {
    notes.status = errorText(reply.code, reply.message);
  }
  render();
}

/** The lobby's name field renames the player too: one name per player (once the player
 * is known: a name typed before is taken when the identity comes). */
async function followName(connection, ws) {
  const name = $("name").value.trim();
  if (!nameEdited || !me || !name || name === me.name) return;
  nameEdited = false;
  const reply = await (connection ? connection.request({ type: "rename", name }, ws) : ask({ type: "rename", name }));
  if (reply.type === "identity") took(reply);
  render();
}

async function toggle() {
  const panel = $("you");
  if (!panel.firstChild) build();
  const open = panel.hidden;
  panel.hidden = !open;
  $("you-button").setAttribute("aria-expanded", String(open));
  if (!open) return;
  $("settings").hidden = true; // the two share a corner
  $("settings-button").setAttribute("aria-expanded", "false");
  notes.status = notes.name = notes.handle = notes.recover = "";
  confirming = false;
  render();
  $("you-title").focus();
  if (!me && !guest) {
    try {
      await conn.ensure(); // identifies on the way
    } catch (e) {
      notes.status = errorText(e.code, e.message);
    }
    render();
  }
}

function field(id, labelKey, input) {
  const label = el("label", "field");
  const span = el("span");
  span.dataset.you = labelKey;
  input.id = id;
  label.append(span, input);
  return label;
}

function labelled(node, key) {
  node.dataset.you = key;
  return node;
}

/** Build the panel (when first opened); :func:`render` fills in the words and the state. */
function build() {
  const panel = $("you");
  panel.setAttribute("role", "region");
  panel.setAttribute("aria-labelledby", "you-title");
  const title = labelled(el("h2"), "you.title");
  title.id = "you-title";
  title.tabIndex = -1;
  const status = el("p", "hint");
  status.id = "you-status";
  status.setAttribute("role", "status");

  const code = el("div", "recovery");
  code.id = "you-code";
  code.setAttribute("role", "alert");
  const codeText = el("code", "recovery-code");
  codeText.id = "you-code-text";
  const done = labelled(el("button", "primary"), "you.code_done");
  done.type = "button";
  done.id = "you-code-done";
  code.append(labelled(el("h3"), "you.code_title"), codeText, labelled(el("p"), "you.code_text"), done);

  const nameInput = el("input");
  nameInput.maxLength = 24;
  nameInput.autocomplete = "nickname";
  const nameForm = el("form", "you-form");
  nameForm.id = "you-name-form";
  const nameSave = labelled(el("button"), "you.save");
  nameSave.type = "submit";
  const nameNote = el("p", "note");
  nameNote.id = "you-name-note";
  nameNote.setAttribute("role", "status");
  nameForm.append(field("you-name", "you.name", nameInput), nameSave, nameNote);

  const handleInput = el("input");
  handleInput.maxLength = 20;
  handleInput.autocomplete = "username";
  handleInput.spellcheck = false;
  handleInput.setAttribute("aria-describedby", "you-handle-hint");
  const handleForm = el("form", "you-form");
  handleForm.id = "you-handle-form";
  const handleHint = labelled(el("p", "hint"), "you.handle_hint");
  handleHint.id = "you-handle-hint";
  const handleSave = labelled(el("button"), "you.save");
  handleSave.type = "submit";
  const handleNote = el("p", "note");
  handleNote.id = "you-handle-note";
  handleNote.setAttribute("role", "status");
  const page = el("p");
  page.id = "you-page";
  const pageLink = labelled(el("a"), "you.page");
  pageLink.id = "you-page-link";
  page.append(pageLink);
  handleForm.append(field("you-handle", "you.handle", handleInput), handleHint, handleSave, handleNote, page);

  const rec = el("details");
  rec.id = "you-recover";
  const recForm = el("form", "you-form");
  recForm.id = "you-recover-form";
  const recInput = el("input");
  recInput.maxLength = 40;
  recInput.autocomplete = "off";
  recInput.spellcheck = false;
  recInput.placeholder = "7K2Q-M9XD-4PTR-W8HN-3FJC-6YVB";
  const recButton = labelled(el("button"), "you.recover_button");
  recButton.type = "submit";
  const recNote = el("p", "note");
  recNote.id = "you-recover-note";
  recNote.setAttribute("role", "status");
  recForm.append(field("you-recover-code", "you.recover_label", recInput), recButton, recNote);
  rec.append(labelled(el("summary"), "you.recover"), labelled(el("p", "hint"), "you.recover_text"), recForm);

  const del = el("div", "you-delete");
  const delButton = labelled(el("button", "danger"), "you.delete");
  delButton.type = "button";
  delButton.id = "you-delete";
  const confirm = el("div", "confirm");
  confirm.id = "you-confirm";
  confirm.setAttribute("role", "alert");
  const yes = labelled(el("button", "danger"), "you.delete_yes");
  yes.type = "button";
  yes.id = "you-delete-yes";
  const no = labelled(el("button"), "you.delete_no");
  no.type = "button";
  no.id = "you-delete-no";
  const row = el("div", "buttons");
  row.append(yes, no);
  confirm.append(labelled(el("p"), "you.delete_confirm"), row);
  del.append(delButton, confirm);

  const retry = labelled(el("button"), "you.retry");
  retry.type = "button";
  retry.id = "you-retry";
  retry.addEventListener("click", async () => {
    notes.status = "";
    refused = null;
    render();
    await retryIdentity();
  });

  panel.append(title, status, retry, code, nameForm, handleForm, rec, del);

  done.addEventListener("click", () => {
    sessionStorage.removeItem(CODE);
    render();
    $("you-title").focus();
  });
  nameForm.addEventListener("submit", saveName);
  handleForm.addEventListener("submit", saveHandle);
  recForm.addEventListener("submit", recover);
  delButton.addEventListener("click", () => {
    confirming = true;
    render();
    $("you-delete-no").focus();
  });
  no.addEventListener("click", () => {
    confirming = false;
    render();
    $("you-delete").focus();
  });
  yes.addEventListener("click", forget);
}

/** Fill the panel and the button from the current state, in the current language. */
export function render() {
  const code = sessionStorage.getItem(CODE);
  const button = $("you-button");
  button.classList.toggle("attention", Boolean(code) || Boolean(refused && !me));
  button.setAttribute("aria-label", code ? t("you.button_code") : refused && !me ? t("you.button_refused") : t("you.button"));
  const panel = $("you");
  if (!panel.firstChild) return; // built when first opened
  for (const node of panel.querySelectorAll("[data-you]")) node.textContent = t(node.dataset.you);
  let status = notes.status;
  if (!status && refused && !me) status = refusalText();
  if (!status) status = guest ? t("you.guest") : me ? t("you.intro") : deleted ? t("you.deleted") : t("you.connecting");
  $("you-status").textContent = status;
  $("you-retry").hidden = !(refused && !me);
  $("you-code").hidden = !code || !me;
  $("you-code-text").textContent = code || "";
  const known = Boolean(me);
  for (const id of ["you-name-form", "you-handle-form", "you-delete"]) $(id).hidden = !known;
  $("you-recover").hidden = guest;
  if (known) {
    // only fill a field the reader is not typing in
    if (document.activeElement !== $("you-name")) $("you-name").value = me.name;
    if (document.activeElement !== $("you-handle")) $("you-handle").value = me.handle || "";
  }
  $("you-name-note").textContent = notes.name;
  $("you-handle-note").textContent = notes.handle;
  $("you-recover-note").textContent = notes.recover;
  $("you-page").hidden = !(me && me.handle);
  if (me && me.handle) $("you-page-link").href = `/p/${encodeURIComponent(me.handle)}`;
  $("you-confirm").hidden = !confirming;
  $("you-delete").hidden = !known || confirming;
}

/** Why the page has no player, in words: a refusal's own text, and what it means. */
export function refusalText() {
  if (!refused) return "";
  const why = refused.code === "rate_limited" ? t("you.refused_rate") : errorText(refused.code, refused.message);
  return `${why} ${t("you.refused_guest")}`;
}

/** Wire the identity into the connection and the page: every connection says who its
 * player is right after hello; the "You" button opens the panel. */
/** Make this browser's player now, with no form (the deal of the day is played by
 * players only: the tap that plays it makes one). True when the page has a player, or
 * when the server keeps none (everyone plays as a guest there). */
export async function becomePlayer() {
  if (me || guest) return true;
  deleted = false; // asked for: a deletion earlier in this visit no longer holds
  try {
    await conn.ensure(); // identifies on the way, making a player when none is kept
  } catch {
    return false;
  }
  await turn;
  if (!me && !guest) await identify(conn);
  render();
  return Boolean(me) || guest;
}

export function setupIdentity(connection) {
  conn = connection;
  connection.onWelcome = (ws) => identifyOn(connection, ws);
  $("you-button").addEventListener("click", toggle);
  $("name").addEventListener("change", () => {
    nameEdited = true;
    followName().catch(() => {});
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && !$("you").hidden) {
      $("you").hidden = true;
      $("you-button").setAttribute("aria-expanded", "false");
      $("you-button").focus();
    }
  });
  render();
}
