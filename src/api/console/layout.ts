/**
 * The frame every console page shares: the document head (the stylesheet and the one script,
 * both static files of the console, as the Content-Security-Policy allows nothing inline), a
 * skip link, the header with who is signed in and a way out, and the main content. A form of a
 * signed-in page carries the session's token (`tokenField`), which every post must bring back.
 */
import { html, type Html, type HtmlPart } from "./html.ts";
import { ASSET_PATHS } from "./assets.ts";

/** Who is looking, as a page shows it; absent on the sign-in page. */
export interface Viewer {
  namespace: string;
  principal: string;
  csrf: string;
  /** Whether the person signed in with a key (and so may sign out). */
  signedIn: boolean;
}

export const CSRF_FIELD = "_csrf";

export function tokenField(viewer: Viewer): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${viewer.csrf}" />`;
}

export function page(options: { title: string; viewer?: Viewer | undefined; main: HtmlPart }): Html {
  const { title, viewer, main } = options;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${title} · Rewind</title>
        <link rel="stylesheet" href="${ASSET_PATHS.css}" />
        <script type="module" src="${ASSET_PATHS.js}"></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to the content</a>
        <header class="top">
          <a class="brand" href="/ui/runs">Rewind</a>
          <nav aria-label="Console">${viewer ? html`<a href="/ui/runs">Runs</a>` : ""}</nav>
          ${viewer ? whoIsHere(viewer) : ""}
        </header>
        <main id="main" tabindex="-1">${main}</main>
      </body>
    </html>`;
}

function whoIsHere(viewer: Viewer): Html {
  return html`<div class="who">
    <span>namespace <strong>${viewer.namespace}</strong> · <span class="principal">${viewer.principal}</span></span>
    ${
      viewer.signedIn
        ? html`<form method="post" action="/ui/session/end">
            ${tokenField(viewer)}<button type="submit" class="link">Sign out</button>
          </form>`
        : ""
    }
  </div>`;
}

/** A page's message about a request that failed, as text (the API's message, or the console's). */
export function problem(message: string | undefined): Html {
  return message ? html`<p class="problem" role="alert">${message}</p>` : html``;
}
