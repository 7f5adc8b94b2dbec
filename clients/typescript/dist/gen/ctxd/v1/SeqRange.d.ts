import type { Long } from '@grpc/proto-loader';
/**
 * An inclusive range of seqs.
 */
export interface SeqRange {
    /**
     * First seq to return (>= 1).
     */
    'firstSeq'?: (number | string | Long);
    /**
     * Last seq to return (>= first_seq, at most the session's last seq).
     */
    'lastSeq'?: (number | string | Long);
}
/**
 * An inclusive range of seqs.
 */
export interface SeqRange__Output {
    /**
     * First seq to return (>= 1).
     */
    'firstSeq': (number);
    /**
     * Last seq to return (>= first_seq, at most the session's last seq).
     */
    'lastSeq': (number);
}
