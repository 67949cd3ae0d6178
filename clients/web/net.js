// The connection to the race server: hello/welcome, requests matched to their replies by
// id, and everything else handed to onEvent.

export const PROTOCOL_VERSION = 2;

/** A room code as every client hashes it (upper case, letters and digits: "k7qf-2m" →
 * "K7QF2M"), or null: the same form as clients/links.py's room_hint. */
export function roomHint(room) {
  const code = String(room || "").toUpperCase().replace(/[^A-Z0-9]/g, "");
  return code && code.length <= 16 ? code : null;
}

export class Connection {
  constructor(onEvent, onClose) {
    this.ws = null;
    this.welcome = null;
    this.nextId = 1;
    this.waiting = new Map(); // request id → resolve
    this.retiring = new Set();
    this.opening = null; // the socket being opened by ensure()
    this.onEvent = onEvent; // (msg) for frames that are not replies
    this.onClose = onClose; // (code) when the live socket closes
    this.onWelcome = null; // async (ws) run on each new socket before any request (identity.js)
    // The room new sockets are for, when known: their address says ?room=CODE so that the
    // load balancer sends all of a room's sockets to one worker (a hint; the server ignores it).
    this.room = null;
  }

  static url(room) {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const hint = roomHint(room);
    return `${proto}//${location.host}/` + (hint ? `?room=${hint}` : "");
  }

  /** Open a socket and say hello; resolves with the socket once welcomed. */
  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(Connection.url(this.room));
      let welcomed = false;
      ws.onopen = () => ws.send(JSON.stringify({ type: "hello", v: PROTOCOL_VERSION, client: "web" }));
      ws.onmessage = (ev) => {
        const msg = JSON.parse(ev.data);
        if (welcomed) return;
        if (msg.type === "welcome") {
          welcomed = true;
          this.welcome = msg;
          ws.onmessage = (e) => this.frame(ws, e.data);
          // who this connection's player is, said before the page's first request
          Promise.resolve(this.onWelcome && this.onWelcome(ws))
            .catch(() => {})
            .then(() => resolve(ws));
        } else {
          reject(Object.assign(new Error(msg.message || "refused"), { code: msg.code || "refused" }));
        }
      };
      ws.onerror = () => {
        if (!welcomed) reject(Object.assign(new Error("cannot reach the server"), { code: "offline" }));
      };
      ws.onclose = (ev) => {
        if (this.retiring.has(ws)) {
          this.retiring.delete(ws);
          return;
        }
        if (ws !== this.ws || !welcomed) return;
        this.ws = null;
        this.onClose(ev.code);
      };
    });
  }

  async ensure() {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) return this.ws;
    // one socket for callers that ask at once (the page's start and a first click)
    if (!this.opening) {
      this.opening = this.open()
        .then((ws) => (this.ws = ws))
        .finally(() => (this.opening = null));
    }
    return this.opening;
  }

  /** Send a request and wait for its direct reply. */
  async request(payload, ws) {
    const socket = ws || (await this.ensure());
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      socket.send(JSON.stringify({ ...payload, id }));
    });
  }

  frame(ws, data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (msg.id !== undefined && msg.id !== null && this.waiting.has(msg.id)) {
      const resolve = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      resolve(msg);
      return;
    }
    if (ws !== this.ws) return; // a retiring connection
    this.onEvent(msg);
  }

  /** Swap to ``ws`` (a resumed seat): the old socket closes without a fuss. */
  replace(ws) {
    const old = this.ws;
    this.ws = ws;
    if (old) {
      this.retiring.add(old);
      if (old.readyState <= WebSocket.OPEN) old.close();
    }
  }

  /** Close on purpose (leaving a room). */
  close() {
    const old = this.ws;
    this.ws = null;
    if (old) {
      this.retiring.add(old);
      old.close();
    }
  }
}
