import type { Long } from '@grpc/proto-loader';
export interface OutputEvicted {
    /**
     * The tool result shown as a preview (Expand returns it whole).
     */
    'seq'?: (number | string | Long);
    'toolName'?: (string);
    /**
     * Its tokens, and the preview's.
     */
    'tokens'?: (number | string | Long);
    'previewTokens'?: (number | string | Long);
}
export interface OutputEvicted__Output {
    /**
     * The tool result shown as a preview (Expand returns it whole).
     */
    'seq': (number);
    'toolName': (string);
    /**
     * Its tokens, and the preview's.
     */
    'tokens': (number);
    'previewTokens': (number);
}
