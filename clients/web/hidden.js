// Boards a spectator was refused because the race's boards are hidden (`boards_hidden`: a
// tournament round while it runs, the deal of the day, a host's progress-only race), asked
// for again when they open, so that they appear without a click. The server says so for a
// tournament round's rooms (`boards_open`, to every connection in them, as the round
// ends): the seats refused are followed again then. Elsewhere the page guesses — the
// round's end (`round_ended`), the race's (`race_ended`) — and asks once only: a refusal
// then (a host's spectator delay not yet run, a viewer entered in the tournament, the day
// not over, a tournament's other rooms still racing) leaves the progress shown, and
// nothing is guessed again until the spectator asks; the server's word still counts. No
// DOM.

/** Whether ``reply`` refuses a ``follow`` because the race's boards are hidden. */
export function boardsHidden(reply) {
  return Boolean(reply) && reply.type === "error" && reply.code === "boards_hidden";
}

/** The seats of one room whose boards were refused as hidden, to follow again. */
export class HiddenBoards {
  constructor() {
    this.room = null;
    this.seats = [];
    this.guessed = false; // asked again on a guess (:meth:`again`) already
  }

  /** A ``follow`` of ``seats`` in ``room`` was answered ``reply``; ``again``: it was one
   * asked again (:meth:`again`, :meth:`opened`). True when the boards are hidden. Refused
   * again, what was kept stays: nothing after a guess but the server's word, nothing at
   * all after that. Any other answer forgets what was refused. */
  answered(room, seats, reply, again = false) {
    const hidden = boardsHidden(reply);
    if (hidden && again && room === this.room) return true;
    this.room = room;
    this.seats = hidden && !again && seats.length ? [...seats] : [];
    this.guessed = false;
    return hidden;
  }

  /** The boards of ``room`` may be shown now (its round or race ended: a guess): the
   * seats refused there, to follow again — once: none from then on, nor for another room
   * (whose end spends the refusal). */
  again(room) {
    if (room !== this.room) this.seats = [];
    const seats = this.guessed ? [] : [...this.seats];
    this.guessed = true;
    return seats;
  }

  /** The server said the boards of ``room`` are open (``boards_open``): the seats refused
   * there — after a guess refused too — to follow again, once. */
  opened(room) {
    if (room !== this.room) return []; // another room's news: what was refused here stays
    const seats = this.seats;
    this.seats = [];
    return seats;
  }
}
