// The player's settings (the cog in the header): rule reminders, double tap, sound, the
// cards' size and the deck's colours, kept in localStorage.

import { currentLang } from "./i18n.js";
import { $ } from "./page.js";

/** The settings' flags, read where they matter (the reminders, a double tap, a sound). */
export const settings = {
  flag(name, fallback) {
    const v = localStorage.getItem(`samedeal.${name}`);
    return v === null ? fallback : v === "on";
  },
  set(name, on) {
    localStorage.setItem(`samedeal.${name}`, on ? "on" : "off");
  },
  get rules() {
    return this.flag("rules", true);
  },
  get doubleClick() {
    return this.flag("double", true);
  },
  get sound() {
    return this.flag("sound", false);
  },
  choice(name, allowed) {
    const v = localStorage.getItem(`samedeal.${name}`);
    return allowed.includes(v) ? v : allowed[0];
  },
  /** The cards' indices: ``normal``, ``large`` or ``largest`` (a phone's board is as wide as
   * the screen: bigger corners, and columns that show more of each card). */
  get cardSize() {
    return this.choice("card_size", CARD_SIZES);
  },
  /** The deck: ``classic`` (red and black), ``four`` (diamonds blue, clubs green) or
   * ``contrast`` (high contrast). */
  get deck() {
    return this.choice("deck", DECKS);
  },
};

const CARD_SIZES = ["normal", "large", "largest"];
const DECKS = ["classic", "four", "contrast"];

/** Dress every board of the page as the settings say (style.css reads the classes). */
function applyLook() {
  for (const size of CARD_SIZES) document.body.classList.toggle(`cards-${size}`, settings.cardSize === size && size !== "normal");
  for (const deck of DECKS) document.body.classList.toggle(`deck-${deck}`, settings.deck === deck && deck !== "classic");
}

function settingsIcon() {
  // a cog drawn as a dashed ring: no glyph that a font may lack
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const ring = document.createElementNS(svg.namespaceURI, "circle");
  for (const [k, v] of Object.entries({ cx: 12, cy: 12, r: 8, fill: "none", stroke: "currentColor", "stroke-width": 4, "stroke-dasharray": "3.1 3.2" })) ring.setAttribute(k, v);
  const hub = document.createElementNS(svg.namespaceURI, "circle");
  for (const [k, v] of Object.entries({ cx: 12, cy: 12, r: 5, fill: "none", stroke: "currentColor", "stroke-width": 2.5 })) hub.setAttribute(k, v);
  svg.append(ring, hub);
  return svg;
}

/** Wire the settings panel; ``changeLang(code)`` switches the page's language. */
export function setupSettings(changeLang) {
  $("settings-button").append(settingsIcon());
  $("settings-button").addEventListener("click", () => {
    const panel = $("settings");
    panel.hidden = !panel.hidden;
    $("settings-button").setAttribute("aria-expanded", String(!panel.hidden));
  });
  for (const [id, name] of [["opt-rules", "rules"], ["opt-double", "double"], ["opt-sound", "sound"]]) {
    $(id).checked = settings.flag(name, name !== "sound");
    $(id).addEventListener("change", (e) => settings.set(name, e.target.checked));
  }
  for (const [id, name] of [["opt-card-size", "card_size"], ["opt-deck", "deck"]]) {
    $(id).value = name === "deck" ? settings.deck : settings.cardSize;
    $(id).addEventListener("change", (e) => {
      localStorage.setItem(`samedeal.${name}`, e.target.value);
      applyLook();
    });
  }
  applyLook();
  for (const id of ["lang-select", "lang-lobby"]) {
    $(id).value = currentLang();
    $(id).addEventListener("change", (e) => changeLang(e.target.value));
  }
}
