import type { Long } from '@grpc/proto-loader';
export interface GetJobRequest {
    'jobId'?: (number | string | Long);
}
export interface GetJobRequest__Output {
    'jobId': (number);
}
