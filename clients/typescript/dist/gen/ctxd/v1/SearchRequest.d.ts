import type { Role as _ctxd_v1_Role, Role__Output as _ctxd_v1_Role__Output } from '../../ctxd/v1/Role.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
import type { SearchScope as _ctxd_v1_SearchScope, SearchScope__Output as _ctxd_v1_SearchScope__Output } from '../../ctxd/v1/SearchScope.js';
export interface SearchRequest {
    /**
     * The session to search; empty: every session of the tenant.
     */
    'sessionId'?: (string);
    /**
     * Web-search syntax: words (all must match, stemmed: "failing" finds "fails"),
     * "a quoted phrase", `or` between alternatives, -word to exclude. Any string is
     * accepted; one with no searchable word finds nothing. At most 1 000 characters.
     */
    'query'?: (string);
    /**
     * Only messages of these roles (summaries are unaffected). Empty: every role.
     */
    'roles'?: (_ctxd_v1_Role)[];
    /**
     * Only what was written at or after / before this time (either may be left unset).
     */
    'since'?: (_google_protobuf_Timestamp | null);
    'until'?: (_google_protobuf_Timestamp | null);
    'scope'?: (_ctxd_v1_SearchScope);
    /**
     * Most hits to return (0: 20; at most 100), best first.
     */
    'limit'?: (number);
    /**
     * Only this session and its descendants (children, their children, ... including
     * deleted ones' descendants): one subagent tree. Not with session_id.
     */
    'treeRootSessionId'?: (string);
}
export interface SearchRequest__Output {
    /**
     * The session to search; empty: every session of the tenant.
     */
    'sessionId': (string);
    /**
     * Web-search syntax: words (all must match, stemmed: "failing" finds "fails"),
     * "a quoted phrase", `or` between alternatives, -word to exclude. Any string is
     * accepted; one with no searchable word finds nothing. At most 1 000 characters.
     */
    'query': (string);
    /**
     * Only messages of these roles (summaries are unaffected). Empty: every role.
     */
    'roles': (_ctxd_v1_Role__Output)[];
    /**
     * Only what was written at or after / before this time (either may be left unset).
     */
    'since': (_google_protobuf_Timestamp__Output | null);
    'until': (_google_protobuf_Timestamp__Output | null);
    'scope': (_ctxd_v1_SearchScope__Output);
    /**
     * Most hits to return (0: 20; at most 100), best first.
     */
    'limit': (number);
    /**
     * Only this session and its descendants (children, their children, ... including
     * deleted ones' descendants): one subagent tree. Not with session_id.
     */
    'treeRootSessionId': (string);
}
