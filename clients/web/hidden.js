// Boards a spectator was refused because the race's boards are hidden (`boards_hidden`: a
// tournament round while it runs, the deal of the day, a host's progress-only race), asked
// for again once when they may have opened — the round's end, the race's — so that they
// appear without a click. The server tells nobody that they opened, hence the guess; and
// once only: a second refusal (a host's spectator delay not yet run, a viewer entered in
// the tournament, the day not over) leaves the progress shown, and nothing is asked again
// until the spectator asks. No DOM.

/** Whether ``reply`` refuses a ``follow`` because the race's boards are hidden. */
export function boardsHidden(reply) {
  return Boolean(reply) && reply.type === "error" && reply.code === "boards_hidden";
}

/** The seats of one room whose boards were refused as hidden, to follow again once. */
export class HiddenBoards {
  constructor() {
    this.room = null;
    this.seats = [];
  }

  /** A ``follow`` of ``seats`` in ``room`` was answered ``reply``; ``again``: it was the
   * one asked again (:meth:`again`), whose refusal is final. True when the boards are
   * hidden. Any other answer forgets what was refused. */
  answered(room, seats, reply, again = false) {
    const hidden = boardsHidden(reply);
    this.room = room;
    this.seats = hidden && !again && seats.length ? [...seats] : [];
    return hidden;
  }

  /** The boards of ``room`` may be shown now (its round or race ended): the seats refused
   * there, to follow again — once: none from then on, nor for another room. */
  again(room) {
    const seats = room === this.room ? this.seats : [];
    this.seats = [];
    return seats;
  }
}
