// The approver app: a person activates this browser as a device, signs in, and answers approval
// requests. It uses only the client library (@svc-identity/client), as any app would.
import {
  IndexedDbDeviceKeyStore,
  NotificationClient,
  Passkeys,
  SignIn,
  actionNeedsNumber,
  deviceRegistration,
  ensureDeviceKey,
} from '@svc-identity/client';

const config = await (await fetch('config.json')).json();

// One origin only: the device key, the stored tokens and the sign-in redirect all belong to the
// origin of the service's public URL. Opened under another name for the same server (127.0.0.1
// for localhost, or the other way round), the app moves there first, keeping an activation link.
const home = new URL(config.redirectUri);
if (location.origin !== home.origin) {
  location.replace(`${home.href}${location.search}${location.hash}`);
  await new Promise(() => undefined);
}

const signIn = new SignIn({
  serviceUrl: config.serviceUrl,
  clientId: config.clientId,
  redirectUri: config.redirectUri,
  allowInsecureHttp: config.serviceUrl.startsWith('http://'),
});
const deviceKeys = new IndexedDbDeviceKeyStore('svc-identity-approver');
const $ = (id) => document.getElementById(id);

/**
 * The status line of each card, by what it reports on. Each is a live region (role=status) in the
 * page's HTML from the start, as screen readers announce changes only to regions they already
 * know, and sits in the flow under the card's controls, so a message never covers one.
 */
const statusLines = { activation: 'activate-status', account: 'account-status', approvals: 'status', passkeys: 'passkeys-status' };

/** Shows one message, in the card it is about (`where`, a key of statusLines); the others go. */
function say(where, message, isError = false) {
  for (const [place, id] of Object.entries(statusLines)) {
    $(id).textContent = place === where ? message : '';
    $(id).classList.toggle('error', place === where && isError);
  }
  // Scrolls only when the message is out of view (answering a card far down a phone's list).
  $(statusLines[where]).scrollIntoView({ block: 'nearest' });
}

// Tokens live in this tab's sessionStorage only: closing the tab, or signing out, forgets them.
function storedTokens() {
  const raw = sessionStorage.getItem('tokens');
  return raw ? JSON.parse(raw) : undefined;
}

function saveTokens(tokens) {
  sessionStorage.setItem('tokens', JSON.stringify(tokens));
}

/** The account this device was activated for (the device key itself stays in IndexedDB). */
function activatedAccount() {
  const raw = localStorage.getItem('activatedFor');
  return raw ? JSON.parse(raw) : undefined;
}

/** Who the token belongs to: the service's /v1/me (user tokens are opaque to the app). */
async function signedInUser(accessToken) {
  const res = await fetch(`${config.serviceUrl}/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  return res.ok ? (await res.json()).userId : undefined;
}

/** The text in the reader's language when the notification has it, else the first one. */
function textFor(notification) {
  const language = navigator.language.split('-')[0];
  return notification.body.find((b) => b.lng.toLowerCase().startsWith(language)) ?? notification.body[0];
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/** The activation card: shown until this device is activated, and on request for another account. */
function showActivation(visible) {
  $('activate-section').hidden = !visible;
  $('activate-again').hidden = visible || !activatedAccount();
}

/**
 * An activation link (`#enterprise=…&user=…&code=…`, see docs/enrollment.md) fills the form; the
 * person still presses Activate. The details leave the address bar at once, so the code is not
 * kept in the history or shown over a shoulder.
 */
function fillFromActivationLink() {
  const details = new URLSearchParams(location.hash.slice(1));
  if (!details.has('code')) return;
  history.replaceState(null, '', location.pathname + location.search);
  $('activate-enterprise').value = details.get('enterprise') ?? '';
  $('activate-user').value = details.get('user') ?? '';
  $('activate-code').value = details.get('code') ?? '';
  showActivation(true);
  say('activation', 'Check the details from your activation message, then press Activate.');
}

async function activate(event) {
  event.preventDefault();
  const form = new FormData(event.target);
  const enterpriseId = String(form.get('enterpriseId') ?? '').trim();
  try {
    const keys = await ensureDeviceKey(deviceKeys);
    const deviceId = localStorage.getItem('deviceId') ?? `browser-${crypto.randomUUID()}`;
    localStorage.setItem('deviceId', deviceId);
    const res = await fetch(`${config.serviceUrl}/v1/users/activate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...(enterpriseId ? { enterpriseId } : {}),
        userId: String(form.get('userId')).trim(),
        activationCode: String(form.get('activationCode')).trim(),
        device: await deviceRegistration(keys, deviceId),
      }),
    });
    const body = await res.json();
    if (!res.ok) return say('activation', activationRefusal(res.status, body), true);
    localStorage.setItem('activatedFor', JSON.stringify({ userId: body.userId, enterpriseId: enterpriseId || 'default' }));
    event.target.reset();
    showActivation(false);
    // The activation card is gone: the message goes with the Sign in button, what comes next.
    say(
      'account',
      `This device is activated for ${body.userId}. Verification key: ${body.verificationKey}. It must be the one in your ` +
        'activation message; if it is not, tell your administrator. You can sign in now.',
    );
  } catch (err) {
    say('activation', `Activation failed: ${err.message}`, true);
  }
}

function activationRefusal(status, body) {
  if (status === 422 && typeof body.attemptsLeft === 'number')
    return `That activation code is not right for this user and organization. ${plural(body.attemptsLeft, 'try', 'tries')} left.`;
  if (status === 423 || status === 410) return `${body.message}. Your administrator can send you a new one.`;
  if (status === 429) return `Too many tries. ${body.message}.`;
  return `Activation refused: ${body.message ?? status}`;
}

/** `maxAge`: sign in again unless the last sign-in is that recent (seconds), as adding or removing a passkey asks. */
async function startSignIn(options = {}) {
  const { url, pending } = await signIn.start(options);
  sessionStorage.setItem('pending', JSON.stringify(pending));
  location.assign(url);
}

/**
 * Signs out for real: the tokens are revoked at the service and forgotten here, then the
 * service's logout page ends its sign-in session, so the next person to press Sign in on this
 * device is asked who they are and sees only their own approvals.
 */
async function signOut() {
  await turnOffAlerts().catch((err) => console.warn(`alerts not turned off: ${err.message}`));
  const tokens = storedTokens() ?? {};
  sessionStorage.clear();
  $('pending-list').replaceChildren();
  $('history-rows').replaceChildren();
  say('account', 'Signing out…');
  const { endSessionUrl, notRevoked } = await signIn.signOut(tokens, { postLogoutRedirectUri: config.redirectUri });
  if (notRevoked.length > 0) console.warn(`the service did not confirm revoking: ${notRevoked.join(', ')}`);
  if (endSessionUrl) location.assign(endSessionUrl);
  else location.replace(config.redirectUri);
}

/** Back from the login page with ?code=...&state=...: exchange the code, then clean the address bar. */
async function finishSignInIfRedirected() {
  const here = new URL(location.href);
  if (!here.searchParams.has('code') && !here.searchParams.has('error')) return;
  const pending = JSON.parse(sessionStorage.getItem('pending') ?? 'null');
  sessionStorage.removeItem('pending');
  history.replaceState(null, '', here.pathname + here.hash);
  if (!pending) return say('account', 'This sign-in was not started here. Sign in again.', true);
  try {
    saveTokens(await signIn.finish(here, pending));
  } catch (err) {
    // An SvcIdentityError: kind 'sign-in-again' when the redirect carried an error, 'network' when unreachable.
    say('account', `Sign-in failed: ${err.message}${err.kind === 'network' ? ' (try again in a moment)' : ''}`, true);
  }
}

/** Numbers typed into the cards, by notification: kept when the list is drawn again. */
const typedNumbers = new Map();

function renderPending(notifications) {
  const list = $('pending-list');
  list.replaceChildren();
  $('pending-empty').hidden = notifications.length > 0;
  for (const notification of notifications) {
    const uuid = notification.notification_uuid;
    const text = textFor(notification);
    const item = document.createElement('li');
    const heading = document.createElement('h3');
    heading.textContent = text.subject;
    const message = document.createElement('p');
    message.textContent = text.message;
    item.append(heading, message);
    let numberInput;
    if (notification.number_match) {
      const id = `number-${uuid}`;
      const label = document.createElement('label');
      label.htmlFor = id;
      label.textContent = 'Number shown by the app asking for approval';
      numberInput = document.createElement('input');
      Object.assign(numberInput, { id, inputMode: 'numeric', maxLength: 2, pattern: '[0-9]{2}', autocomplete: 'off' });
      numberInput.value = typedNumbers.get(uuid) ?? '';
      numberInput.addEventListener('input', () => typedNumbers.set(uuid, numberInput.value));
      const hint = document.createElement('p');
      hint.className = 'muted';
      hint.textContent = 'Needed to approve only. If you did not ask for this, reject it or report fraud.';
      item.append(label, numberInput, hint);
    }
    const buttons = document.createElement('div');
    buttons.className = 'actions';
    for (const action of notification.actions) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = action.label;
      if (action.action !== notification.actions[0].action) button.classList.add('secondary');
      button.addEventListener('click', () => answer(notification, action.action, numberInput));
      buttons.append(button);
    }
    item.append(buttons);
    // Set aside without an answer (it ends DISMISSED): neither approving nor accusing anyone.
    const dismiss = document.createElement('button');
    dismiss.type = 'button';
    dismiss.className = 'link';
    dismiss.textContent = 'Dismiss without answering';
    dismiss.addEventListener('click', () => client.dismissNotification(uuid));
    item.append(dismiss);
    if (notification.ds_required) {
      const note = document.createElement('p');
      note.className = 'muted';
      note.textContent = 'Your answer is signed with this device’s key.';
      item.append(note);
    }
    list.append(item);
  }
}

function answer(notification, action, numberInput) {
  const needsNumber = actionNeedsNumber(notification, action);
  // What was typed for this notification, not only what this card's field holds: the list may have
  // been drawn again (a stream event) while typing, and the typing then went to the replaced field.
  const number = (typedNumbers.get(notification.notification_uuid) ?? numberInput?.value ?? '').trim();
  if (needsNumber && !/^[0-9]{2}$/.test(number)) {
    numberInput?.focus();
    return say('approvals', 'Type the two-digit number shown by the app asking for approval, then approve.', true);
  }
  client.updateNotification(notification.notification_uuid, action, needsNumber ? number : undefined);
}

function renderHistory(history) {
  const rows = history.map((record) => {
    const row = document.createElement('tr');
    for (const value of [textFor(record)?.subject ?? '', record.status, record.action ?? '', record.signing_status]) {
      const cell = document.createElement('td');
      cell.textContent = value;
      row.append(cell);
    }
    return row;
  });
  $('history-rows').replaceChildren(...rows);
}

/** The stored answer a 409 names, as the person would say it (enterprises may define other actions). */
const ANSWERED_AS = { accept: 'approved', reject: 'rejected', fraud: 'reported' };

/** What went wrong with an answer, in words for the person holding the phone. */
function describeError(error) {
  if (error.code === 141) return 'Your account is blocked. Contact your administrator.';
  if (typeof error.details.triesLeft === 'number')
    return `That is not the number shown by the app asking for approval. ${plural(error.details.triesLeft, 'try', 'tries')} left.`;
  if (/too many wrong numbers/.test(error.message))
    return 'The number was wrong too many times, so this request was refused and reported to its sender.';
  // An answer sent again is acknowledged by the library; a 409 naming another answer means the person answered elsewhere.
  if (error.status === 409 && error.details.notificationStatus === 'UPDATED') {
    const answered = Object.hasOwn(ANSWERED_AS, error.details.action) ? ` (${ANSWERED_AS[error.details.action]})` : '';
    return `This request was already answered on another device${answered}.`;
  }
  if (error.status === 409 || error.status === 410) return 'This request is no longer waiting for an answer.';
  if (error.kind === 'sign-in-again') return 'Your sign-in has ended. Sign in again.';
  if (error.kind === 'network') return 'The service cannot be reached right now. Try again in a moment.';
  return `Could not complete that: ${error.message}`;
}

let client;
let passkeys;

/** The user's passkeys, each with its Remove button. */
async function showPasskeys() {
  const list = await passkeys.list();
  $('passkeys-empty').hidden = list.length > 0;
  $('passkey-list').replaceChildren(
    ...list.map((passkey) => {
      const item = document.createElement('li');
      const name = document.createElement('h3');
      name.textContent = passkey.name;
      const when = document.createElement('p');
      when.className = 'muted';
      const used = passkey.lastUsedAt ? `, last used ${new Date(passkey.lastUsedAt).toLocaleString()}` : ', not used yet';
      when.textContent = `Added ${new Date(passkey.createdAt).toLocaleString()}${used}${passkey.deviceType === 'multiDevice' ? ' (synced)' : ''}`;
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'secondary';
      remove.textContent = `Remove ${passkey.name}`;
      remove.addEventListener('click', () =>
        passkeys
          .remove(passkey.id)
          .then(() => say('passkeys', `Passkey ${passkey.name} removed: it can no longer sign in.`))
          .then(showPasskeys)
          .catch((err) => {
            if (typeof err.details.maxAge === 'number') return offerReauth(err.details.maxAge, 'Removing a passkey', 'remove it');
            say('passkeys', describeError(err), true);
          }),
      );
      item.append(name, when, remove);
      return item;
    }),
  );
}

async function addPasskey(event) {
  event.preventDefault();
  const name = String(new FormData(event.target).get('name') ?? '').trim();
  try {
    const passkey = await passkeys.register(name || undefined);
    event.target.reset();
    say('passkeys', `Passkey ${passkey.name} added. Next time, choose "Sign in with a passkey" on the sign-in page.`);
    await showPasskeys();
  } catch (err) {
    if (typeof err.details.maxAge === 'number') return offerReauth(err.details.maxAge, 'Adding a passkey', 'add the passkey again');
    say('passkeys', err.kind === 'refused' ? `No passkey added: ${err.message}` : describeError(err), true);
  }
}

/**
 * The sign-in is too old to add or remove a passkey: "Confirm it's you" signs in again with the
 * refusal's `maxAge`, and the service asks who this is once more.
 */
function offerReauth(maxAge, change, retry) {
  $('passkey-reauth').hidden = false;
  $('passkey-reauth').onclick = () => startSignIn({ maxAge }).catch((e) => say('passkeys', `Sign-in failed: ${e.message}`, true));
  say('passkeys', `${change} needs a recent sign-in. Confirm it's you, then ${retry}.`, true);
}

// Web Push: this browser hears of a new approval even when the page is closed. The push says only
// that something waits; the service worker (sw.js) shows a generic alert.
const pushSupported = 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

async function pushRegistration() {
  const registration = await navigator.serviceWorker.register('sw.js');
  return { registration, subscription: await registration.pushManager.getSubscription() };
}

/** Asks for permission (a click is needed for that), subscribes and tells the service. */
async function turnOnAlerts() {
  if ((await Notification.requestPermission()) !== 'granted') {
    say('account', 'Alerts are blocked for this page in the browser settings.', true);
    return;
  }
  const { registration, subscription } = await pushRegistration();
  const active =
    subscription ?? (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: await client.getPushKey() }));
  await client.registerPushSubscription(active);
  $('alerts-button').hidden = true;
  say('account', 'Alerts are on: this device tells you when an approval waits.');
}

/** At each start: an existing subscription is registered again (harmless), else the button is offered. */
async function keepAlertsRegistered() {
  if (!pushSupported) return;
  const { subscription } = await pushRegistration();
  if (subscription && Notification.permission === 'granted') await client.registerPushSubscription(subscription);
  else $('alerts-button').hidden = false;
}

/** At sign-out: this browser stops hearing of this person's approvals. */
async function turnOffAlerts() {
  if (!pushSupported || !client) return;
  const { subscription } = await pushRegistration();
  if (!subscription) return;
  await client.unregisterPushSubscription(subscription);
  await subscription.unsubscribe();
}

function refresh() {
  client.getNotifications(0, '', 1, '', '');
  client.getNotificationHistory(20, '', 1, '', '', '', '', '', '');
}

async function main() {
  $('activate-form').addEventListener('submit', activate);
  $('activate-again').addEventListener('click', () => showActivation(true));
  $('signin-button').addEventListener('click', () => startSignIn().catch((err) => say('account', `Sign-in failed: ${err.message}`, true)));
  $('signout-button').addEventListener('click', () => signOut().catch((err) => say('account', `Sign-out failed: ${err.message}`, true)));
  showActivation(!activatedAccount());
  fillFromActivationLink();
  await finishSignInIfRedirected();
  const tokens = storedTokens();
  if (!tokens) return;

  $('who').textContent = `Signed in as ${(await signedInUser(tokens.accessToken)) ?? 'unknown user'}`;
  $('signin-button').hidden = true;
  $('signout-button').hidden = false;
  $('pending-section').hidden = false;
  $('history-section').hidden = false;
  $('passkeys-section').hidden = false;
  // One token provider for everything: a refresh token is used once (rotation), never by two callers.
  const getAccessToken = signIn.accessTokenProvider(tokens, saveTokens);
  client = new NotificationClient({
    serviceUrl: config.serviceUrl,
    getAccessToken,
    deviceKeys,
  });
  // Passkeys only where the browser can make them (a secure page with WebAuthn).
  if (window.PublicKeyCredential) {
    passkeys = new Passkeys({ serviceUrl: config.serviceUrl, getAccessToken });
    $('passkey-form').addEventListener('submit', addPasskey);
    showPasskeys().catch((err) => say('passkeys', describeError(err), true));
  } else {
    $('passkeys-section').hidden = true;
  }
  client.on('onGetNotifications', ({ response }) => renderPending(response.ResponseData.notifications));
  client.on('onGetNotificationsHistory', ({ response }) => renderHistory(response.ResponseData.history));
  client.on('onUpdateNotification', ({ response }) => {
    typedNumbers.delete(response.ResponseData.notification_uuid);
    const verified = response.ResponseData.is_ds_verified ? ' (signature verified)' : '';
    say('approvals', `Answer sent: ${response.ResponseData.message}${verified}`);
    refresh();
  });
  client.on('onDismissNotification', ({ response }) => {
    typedNumbers.delete(response.ResponseData.notification_uuid);
    say('approvals', 'Request dismissed.');
    refresh();
  });
  // New approvals and answers given elsewhere show up at once, without Refresh.
  client.on('onNotificationCreated', refresh);
  client.on('onNotificationEnded', refresh);
  client.on('error', (error) => {
    // The stream reconnects by itself; a dropped connection is not worth a message.
    if (error.operation === 'WatchNotifications' && error.kind === 'network') return;
    say('approvals', describeError(error), true);
    if (error.operation === 'UpdateNotification' || error.operation === 'DismissNotification') refresh();
  });
  $('refresh-button').addEventListener('click', refresh);
  refresh();
  client.watchNotifications();
  $('alerts-button').addEventListener('click', () =>
    turnOnAlerts().catch((err) => say('account', `Alerts could not be turned on: ${err.message}`, true)),
  );
  await keepAlertsRegistered().catch((err) => console.warn(`alerts not registered: ${err.message}`));
}

main().catch((err) => say('account', err.message, true));
