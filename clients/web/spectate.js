// Spectating a room: following up to four players' boards, side by side.

import { followedBoard } from "./board.js";
import { HiddenBoards } from "./hidden.js";
import { errorText, shownName, t } from "./i18n.js";
import { conn, render, toast } from "./page.js";
import { MAX_FOLLOWED, setFollows, state } from "./store.js";

const hidden = new HiddenBoards(); // refused while the race's boards were hidden

/** Follow ``seats`` (up to four boards, side by side); the boards may come before the
 * reply, so the state is ready for them first. ``again``: asked again once the boards may
 * have opened (:func:`followHidden`, :func:`followOpened`). */
export async function follow(seats, again = false) {
  const before = state.follows;
  const room = state.room;
  setFollows(seats);
  render();
  const reply = await conn.request({ type: "follow", seats });
  hidden.answered(room, seats, reply, again);
  if (reply.type !== "ok") {
    setFollows(before);
    toast(errorText(reply.code, reply.message));
    render();
  }
}

/** The boards of this room may be shown now (the round it plays ended): follow again, once,
 * the boards refused while they were hidden; a second refusal says so as the first did. */
export async function followHidden() {
  const seats = hidden.again(state.room);
  if (seats.length) await follow(seats, true);
}

/** The server says the boards of ``room`` are open (``boards_open``: the tournament round
 * its race is part of is over): follow again the boards refused there while they were
 * hidden — a guess's refusal included. */
export async function followOpened(room) {
  const seats = room === state.room ? hidden.opened(room) : [];
  if (seats.length) await follow(seats, true);
}

/** A new race: keep following those of the followed players who race in it. */
export function keepFollowing(racers) {
  if (state.follows.length) follow(state.follows.filter((s) => racers.includes(s)));
}

/** "Watch" on a player: add their board (the oldest goes beyond four); again: remove it. */
export function toggleFollow(seat) {
  if (state.follows.includes(seat)) {
    follow(state.follows.filter((s) => s !== seat));
  } else {
    const seats = [...state.follows, seat];
    follow(seats.slice(Math.max(0, seats.length - MAX_FOLLOWED)));
  }
}

/** A spectator's followed boards, side by side, each under its player's name. */
export function drawBoards(board) {
  board.classList.add("multi", "readonly");
  board.classList.remove("empty-board");
  board.replaceChildren();
  const delay = state.options && state.options.spectator_delay;
  for (const seatNo of state.follows) {
    const seat = state.seats.get(seatNo);
    const name = seat ? shownName(seat.name) : String(seatNo);
    const heading = delay ? t("spectate.watching_delay", { name, s: delay }) : name;
    board.append(followedBoard(seatNo, name, heading, state.boards.get(seatNo), state.game));
  }
}
