/**
 * The custom arg carrying our own message reference, echoed in every SendGrid event. Its own file,
 * so the API (which reads events) does not load the SendGrid mail client (which only workers use).
 */
export const SENDGRID_REFERENCE_ARG = 'svc_ref';
