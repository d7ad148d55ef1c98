/*
 * The console's one script, served as a static file (the Content-Security-Policy runs no inline
 * script). The pages work without it: every decision is a plain form post. With it:
 * - a live region (`data-live`: the URL of its fresh rendering, `data-version`: what it shows)
 *   is asked every 2 s (or `data-live-every` ms) whether it changed, and redrawn when it did; while a field in it holds
 *   what the reader typed, it is not redrawn under them, and a notice offers the new state;
 * - times (`<time datetime>`) are shown in the reader's own zone;
 * - a textarea that must hold JSON (`data-json`) says so before the form is sent;
 * - a form asking to be confirmed (`data-confirm`) is sent only once the reader confirms.
 */
/** How often a live region is asked for again, unless it says (`data-live-every`, in ms). */
const POLL_MS = 2000;

function localizeTimes(root) {
  const today = new Date().toDateString();
  for (const element of root.querySelectorAll("time[datetime]")) {
    const at = new Date(element.getAttribute("datetime"));
    if (Number.isNaN(at.getTime())) continue;
    element.title = at.toISOString();
    element.textContent =
      at.toDateString() === today
        ? at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })
        : at.toLocaleString([], { dateStyle: "medium", timeStyle: "medium" });
  }
}

function checkJson(field) {
  if (field.value.trim() === "" && !field.required) return field.setCustomValidity("");
  try {
    JSON.parse(field.value);
    field.setCustomValidity("");
  } catch (error) {
    field.setCustomValidity(`This is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function enhance(root) {
  localizeTimes(root);
  for (const field of root.querySelectorAll("textarea[data-json]")) {
    field.addEventListener("input", () => checkJson(field));
    checkJson(field);
  }
  for (const form of root.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
}

function announce(region) {
  const status = document.getElementById("live-status");
  const badge = region.querySelector("[data-state]");
  if (status && badge) status.textContent = `The run is ${badge.textContent.trim()}.`;
}

function parse(text) {
  const template = document.createElement("template");
  template.innerHTML = text;
  return template.content.firstElementChild;
}

function swap(region, next) {
  const focused = document.activeElement && region.contains(document.activeElement) ? document.activeElement.id : "";
  document.getElementById("live-notice")?.remove();
  region.replaceWith(next);
  enhance(next);
  announce(next);
  if (focused) document.getElementById(focused)?.focus();
  watch(next);
}

/** Offers the region's newest rendering (`latest()`) without redrawing what the reader is typing in. */
function offer(region, latest) {
  if (document.getElementById("live-notice")) return;
  const notice = document.createElement("div");
  notice.id = "live-notice";
  notice.className = "notice";
  notice.setAttribute("role", "status");
  notice.append("The run has moved on since you began typing here. ");
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Show its new state (drops what you typed)";
  button.addEventListener("click", () => swap(region, latest()));
  notice.append(button);
  region.before(notice);
}

function watch(region) {
  if (region.dataset.liveFinal !== undefined) return;
  let edited = false;
  let newest;
  const mark = () => {
    edited = true;
  };
  region.addEventListener("input", mark);
  region.addEventListener("change", mark);
  const tick = async () => {
    if (!region.isConnected) return;
    if (!document.hidden) {
      try {
        const url = new URL(region.dataset.live, location.href);
        url.searchParams.set("v", region.dataset.version ?? "");
        const response = await fetch(url, { credentials: "same-origin", headers: { accept: "text/html" } });
        if (response.status === 200) {
          const next = parse(await response.text());
          if (next && !edited) return swap(region, next);
          if (next) {
            newest = next;
            region.dataset.version = next.dataset.version ?? "";
            offer(region, () => newest);
          }
        }
      } catch {
        // The API is restarting or the network is down: ask again at the next tick.
      }
    }
    setTimeout(tick, every);
  };
  const every = Number(region.dataset.liveEvery) || POLL_MS;
  setTimeout(tick, every);
}

enhance(document);
for (const region of document.querySelectorAll("[data-live]")) watch(region);
