/**
 * The console's pages that show no run: signing in, and a request that failed (a run or toolset
 * another namespace owns looks missing, as in the API; a refusal says why; anything unexpected
 * says nothing more than that, the API's log has the rest).
 */
import { html, type Html } from "./html.ts";
import { page, problem, type Viewer } from "./layout.ts";

export function signInPage(message?: string): Html {
  return page({
    title: "Sign in",
    main: html`<section class="signin">
      <h1>Sign in</h1>
      <p>Sign in with an API key of this Rewind: you see its namespace's runs and decide as it.</p>
      ${problem(message)}
      <form method="post" action="/ui/session">
        <div class="field">
          <label for="key">API key</label>
          <input id="key" name="key" type="password" autocomplete="off" required autofocus />
        </div>
        <button type="submit" class="primary">Sign in</button>
      </form>
      <p class="muted">The key stays in this request: the console keeps a session for it and never stores the key.</p>
    </section>`,
  });
}

const TITLES: Record<number, string> = {
  400: "Not a request the console can read",
  401: "Sign in first",
  403: "Refused",
  404: "Not found",
  409: "Not now",
  503: "Unavailable",
};

export function errorPage(status: number, message: string, viewer: Viewer | undefined): Html {
  const title = TITLES[status] ?? "Something went wrong";
  return page({
    title,
    viewer,
    main: html`<h1>${title}</h1>
      ${problem(message)}
      <p><a href="/ui/runs">Back to the runs</a></p>`,
  });
}
