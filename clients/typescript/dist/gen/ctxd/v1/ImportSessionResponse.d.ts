import type { Session as _ctxd_v1_Session, Session__Output as _ctxd_v1_Session__Output } from '../../ctxd/v1/Session.js';
import type { Long } from '@grpc/proto-loader';
export interface ImportSessionResponse {
    'session'?: (_ctxd_v1_Session | null);
    /**
     * What was written.
     */
    'messages'?: (number | string | Long);
    'summaries'?: (number | string | Long);
    'ledgerEntries'?: (number | string | Long);
}
export interface ImportSessionResponse__Output {
    'session': (_ctxd_v1_Session__Output | null);
    /**
     * What was written.
     */
    'messages': (number);
    'summaries': (number);
    'ledgerEntries': (number);
}
