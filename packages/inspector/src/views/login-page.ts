import { html } from 'hono/html';
import type { View } from './format.js';
import { layout, type PageContext } from './layout.js';

/** The token form (token mode): posts to `login`, which sets the session cookie and goes to `next`. */
export function loginPage(ctx: PageContext, next: string, error: string | null, name = ''): View {
  return layout(
    ctx,
    'Log in',
    html`<h1>Log in</h1>
${error ? html`<p class="flash error" role="alert">${error}</p>` : ''}
<form class="filters" method="post" action="${ctx.base}/login">
<input type="hidden" name="next" value="${next}">
<label>Your name (recorded with your decisions and actions)<input name="name" value="${name}" autocomplete="username" size="24" maxlength="120"></label>
<label>Inspector token<input type="password" name="token" required autocomplete="current-password" size="40"></label>
<button type="submit">Log in</button>
</form>
<p class="muted">The token is the one the inspector was started with (<code>createInspector({ auth: { token } })</code>, or <code>stepfold inspect --token</code>).</p>`,
  );
}
