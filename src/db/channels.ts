// The NOTIFY channels every node listens on (src/change-feed.ts), and what travels on them.

/** A link changed: the payload is its code, or FLUSH_ALL. */
export const LINK_CHANNEL = 'link_changed'
/** The notice on LINK_CHANNEL that every cached code may have changed (the block list did); never a code. */
export const FLUSH_ALL = '*'
/** A session ended: the payload is its user's id (sent by a trigger on sessions). */
export const SESSION_CHANNEL = 'session_ended'
/** A webhook delivery was queued: wake the deliverers (sent by a trigger on webhook_deliveries); no payload. */
export const WEBHOOK_CHANNEL = 'webhook_pending'
/** Each node's change feed notifies itself here to prove notices reach it (src/change-feed.ts); the payload names the node and the probe. */
export const FEED_PROBE_CHANNEL = 'link_service_feed_probe'
/** A node found a capped link's visits used up while other nodes hold some: they give them back (src/links/caps.ts); the payload is the code. */
export const CAP_CHANNEL = 'link_cap_wanted'
