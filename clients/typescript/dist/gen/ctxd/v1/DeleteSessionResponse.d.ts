import type { Long } from '@grpc/proto-loader';
export interface DeleteSessionResponse {
    /**
     * How many messages were deleted with the session.
     */
    'deletedMessages'?: (number | string | Long);
}
export interface DeleteSessionResponse__Output {
    /**
     * How many messages were deleted with the session.
     */
    'deletedMessages': (number);
}
