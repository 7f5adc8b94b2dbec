import type { Session as _ctxd_v1_Session, Session__Output as _ctxd_v1_Session__Output } from '../../ctxd/v1/Session.js';
export interface CreateSessionResponse {
    'session'?: (_ctxd_v1_Session | null);
}
export interface CreateSessionResponse__Output {
    'session': (_ctxd_v1_Session__Output | null);
}
