// The approver app: a person activates this browser as a device, signs in, and answers approval
// requests. It uses only the client library (@svc-identity/client), as any app would.
import { IndexedDbDeviceKeyStore, NotificationClient, SignIn, deviceRegistration, ensureDeviceKey } from '@svc-identity/client';

const config = await (await fetch('config.json')).json();
const signIn = new SignIn({
  serviceUrl: config.serviceUrl,
  clientId: config.clientId,
  redirectUri: config.redirectUri,
  allowInsecureHttp: config.serviceUrl.startsWith('http://'),
});
const deviceKeys = new IndexedDbDeviceKeyStore('svc-identity-approver');
const $ = (id) => document.getElementById(id);

function say(message, isError = false) {
  $('status').textContent = message;
  $('status').classList.toggle('error', isError);
}

function storedTokens() {
  const raw = sessionStorage.getItem('tokens');
  return raw ? JSON.parse(raw) : undefined;
}

function saveTokens(tokens) {
  sessionStorage.setItem('tokens', JSON.stringify(tokens));
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

async function activate(event) {
  event.preventDefault();
  const form = new FormData(event.target);
  try {
    const keys = await ensureDeviceKey(deviceKeys);
    const deviceId = localStorage.getItem('deviceId') ?? `browser-${crypto.randomUUID()}`;
    localStorage.setItem('deviceId', deviceId);
    const res = await fetch(`${config.serviceUrl}/v1/users/activate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        userId: form.get('userId'),
        activationCode: form.get('activationCode'),
        device: await deviceRegistration(keys, deviceId),
      }),
    });
    const body = await res.json();
    if (!res.ok) return say(`Activation refused: ${body.message ?? res.status}`, true);
    say(`Device activated for ${body.userId}. You can sign in now.`);
  } catch (err) {
    say(`Activation failed: ${err.message}`, true);
  }
}

async function startSignIn() {
  const { url, pending } = await signIn.start();
  sessionStorage.setItem('pending', JSON.stringify(pending));
  location.assign(url);
}

/** Back from the login page with ?code=...&state=...: exchange the code, then clean the address bar. */
async function finishSignInIfRedirected() {
  const here = new URL(location.href);
  if (!here.searchParams.has('code') && !here.searchParams.has('error')) return;
  const pending = JSON.parse(sessionStorage.getItem('pending') ?? 'null');
  sessionStorage.removeItem('pending');
  history.replaceState(null, '', here.pathname);
  if (!pending) return say('This sign-in was not started here. Sign in again.', true);
  try {
    saveTokens(await signIn.finish(here, pending));
  } catch (err) {
    say(`Sign-in failed: ${err.error_description ?? err.message}`, true);
  }
}

function renderPending(notifications) {
  const list = $('pending-list');
  list.replaceChildren();
  $('pending-empty').hidden = notifications.length > 0;
  for (const notification of notifications) {
    const text = textFor(notification);
    const item = document.createElement('li');
    const heading = document.createElement('h3');
    heading.textContent = text.subject;
    const message = document.createElement('p');
    message.textContent = text.message;
    item.append(heading, message);
    let numberInput;
    if (notification.number_match) {
      const id = `number-${notification.notification_uuid}`;
      const label = document.createElement('label');
      label.htmlFor = id;
      label.textContent = 'Number shown by the app asking for approval';
      numberInput = document.createElement('input');
      Object.assign(numberInput, { id, inputMode: 'numeric', maxLength: 2, pattern: '[0-9]{2}', required: true, autocomplete: 'off' });
      item.append(label, numberInput);
    }
    for (const action of notification.actions) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = action.label;
      if (action.action !== notification.actions[0].action) button.classList.add('secondary');
      button.addEventListener('click', () => client.updateNotification(notification.notification_uuid, action.action, numberInput?.value));
      item.append(button);
    }
    if (notification.ds_required) {
      const note = document.createElement('p');
      note.className = 'muted';
      note.textContent = 'Your answer is signed with this device’s key.';
      item.append(note);
    }
    list.append(item);
  }
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

let client;

function refresh() {
  client.getNotifications(0, '', 1, '', '');
  client.getNotificationHistory(20, '', 1, '', '', '', '', '', '');
}

async function main() {
  $('activate-form').addEventListener('submit', activate);
  $('signin-button').addEventListener('click', () => startSignIn().catch((err) => say(`Sign-in failed: ${err.message}`, true)));
  $('signout-button').addEventListener('click', () => {
    sessionStorage.removeItem('tokens');
    location.reload();
  });
  await finishSignInIfRedirected();
  const tokens = storedTokens();
  if (!tokens) return;

  $('who').textContent = `Signed in as ${(await signedInUser(tokens.accessToken)) ?? 'unknown user'}`;
  $('signin-button').hidden = true;
  $('signout-button').hidden = false;
  $('pending-section').hidden = false;
  $('history-section').hidden = false;
  client = new NotificationClient({
    serviceUrl: config.serviceUrl,
    getAccessToken: signIn.accessTokenProvider(tokens, saveTokens),
    deviceKeys,
  });
  client.on('onGetNotifications', ({ response }) => renderPending(response.ResponseData.notifications));
  client.on('onGetNotificationsHistory', ({ response }) => renderHistory(response.ResponseData.history));
  client.on('onUpdateNotification', ({ response }) => {
    const verified = response.ResponseData.is_ds_verified ? ' (signature verified)' : '';
    say(`Answer sent: ${response.ResponseData.message}${verified}`);
    refresh();
  });
  client.on('error', (error) => {
    say(error.code === 141 ? 'Your account is blocked. Contact your administrator.' : `Could not complete that: ${error.message}`, true);
    if (error.operation === 'UpdateNotification') refresh();
  });
  $('refresh-button').addEventListener('click', refresh);
  refresh();
}

main().catch((err) => say(err.message, true));
