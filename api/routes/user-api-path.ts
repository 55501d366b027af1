/**
 * Where the user API lives: the routes an app calls with its signed-in user's token (the client
 * library's). Its CORS and the rendering of its refusals (with the client library's `code`) both
 * apply to this path and everything under it.
 */
export const USER_API_PATH = '/v1/me';
