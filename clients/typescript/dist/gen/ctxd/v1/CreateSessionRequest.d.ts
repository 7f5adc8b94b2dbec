import type { Policy as _ctxd_v1_Policy, Policy__Output as _ctxd_v1_Policy__Output } from '../../ctxd/v1/Policy.js';
export interface CreateSessionRequest {
    /**
     * The session id, unique within the tenant: 1 to 128 characters from [A-Za-z0-9._:-].
     * Empty: ctxd generates one.
     */
    'sessionId'?: (string);
    /**
     * Policy overrides; unset fields take the server defaults.
     */
    'policy'?: (_ctxd_v1_Policy | null);
    /**
     * Free-form string metadata, stored and returned as is.
     */
    'metadata'?: ({
        [key: string]: string;
    });
}
export interface CreateSessionRequest__Output {
    /**
     * The session id, unique within the tenant: 1 to 128 characters from [A-Za-z0-9._:-].
     * Empty: ctxd generates one.
     */
    'sessionId': (string);
    /**
     * Policy overrides; unset fields take the server defaults.
     */
    'policy': (_ctxd_v1_Policy__Output | null);
    /**
     * Free-form string metadata, stored and returned as is.
     */
    'metadata': ({
        [key: string]: string;
    });
}
