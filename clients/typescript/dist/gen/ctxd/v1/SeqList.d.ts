import type { Long } from '@grpc/proto-loader';
/**
 * A list of seqs.
 */
export interface SeqList {
    /**
     * Seqs to return (each >= 1 and at most the session's last seq; at most 1 000).
     * Duplicates are returned once; the response is in seq order.
     */
    'seqs'?: (number | string | Long)[];
}
/**
 * A list of seqs.
 */
export interface SeqList__Output {
    /**
     * Seqs to return (each >= 1 and at most the session's last seq; at most 1 000).
     * Duplicates are returned once; the response is in seq order.
     */
    'seqs': (number)[];
}
