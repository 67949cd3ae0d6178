// A table that may be wider than a phone: its box scrolls sideways, can be reached with the
// keyboard (a labelled region with a tab stop, so the arrow keys scroll it), and says so when
// it does not fit — a shadow on the side with more, and a line under it — since a phone
// shows no scroll bar until the reader happens to swipe.

import { el } from "./board.js";
import { t } from "./i18n.js";

const observer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver((entries) => entries.forEach((e) => mark(e.target.closest(".table-wrap"))));

/** Whether ``wrap`` holds more than it shows, and on which side: its classes and its hint
 * (the line after it, made when first needed) follow. */
function mark(wrap) {
  if (!wrap) return;
  const more = wrap.scrollWidth - wrap.clientWidth > 1;
  wrap.classList.toggle("scrolls", more);
  wrap.classList.toggle("more-right", more && wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 1);
  wrap.classList.toggle("more-left", more && wrap.scrollLeft > 1);
  let hint = wrap.nextElementSibling;
  if (!hint || !hint.classList.contains("scroll-hint")) {
    if (!more || !wrap.parentNode) return;
    hint = el("p", "hint scroll-hint");
    hint.dataset.i18n = "table.scroll_hint"; // translated again with the page
    wrap.after(hint);
  }
  hint.textContent = t("table.scroll_hint");
  hint.hidden = !more;
}

/** Make ``wrap`` a scrolling box named ``label`` (a ``.table-wrap``, its table in it). */
export function scrollBox(wrap, label) {
  wrap.classList.add("table-wrap");
  wrap.tabIndex = 0;
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", label);
  if (!wrap.dataset.watched) {
    wrap.dataset.watched = "1";
    wrap.addEventListener("scroll", () => mark(wrap), { passive: true });
    if (observer) {
      observer.observe(wrap);
      const table = wrap.querySelector("table");
      if (table) observer.observe(table);
    }
  }
  return wrap;
}

/** A new scrolling box named ``label`` holding ``table``. */
export function tableWrap(label, table) {
  const wrap = el("div", "table-wrap");
  wrap.append(table);
  return scrollBox(wrap, label);
}
