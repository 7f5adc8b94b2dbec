import type { Session as _ctxd_v1_Session, Session__Output as _ctxd_v1_Session__Output } from '../../ctxd/v1/Session.js';
export interface ForkSessionResponse {
    /**
     * The fork, as GetSession returns it (forked_from_session_id, forked_at_seq set).
     */
    'session'?: (_ctxd_v1_Session | null);
}
export interface ForkSessionResponse__Output {
    /**
     * The fork, as GetSession returns it (forked_from_session_id, forked_at_seq set).
     */
    'session': (_ctxd_v1_Session__Output | null);
}
