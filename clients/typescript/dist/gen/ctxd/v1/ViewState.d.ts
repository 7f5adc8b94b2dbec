/**
 * How a stored message is rendered in the model's view. The stored original never
 * changes; the state only changes what BuildMessages shows.
 */
export declare const ViewState: {
    readonly VIEW_STATE_UNSPECIFIED: 'VIEW_STATE_UNSPECIFIED';
    /**
     * Rendered whole.
     */
    readonly VIEW_STATE_FULL: 'VIEW_STATE_FULL';
    /**
     * An old tool result replaced by a short placeholder (tool, size, how to recover it).
     */
    readonly VIEW_STATE_CLEARED: 'VIEW_STATE_CLEARED';
    /**
     * A large tool result rendered as a head + tail preview with a pointer to the original.
     */
    readonly VIEW_STATE_EVICTED: 'VIEW_STATE_EVICTED';
    /**
     * Covered by a summary of the older steps of its turn (a long single turn that no
     * longer fit): not in the view; the summary stands for it. Expand returns it.
     */
    readonly VIEW_STATE_SUMMARIZED: 'VIEW_STATE_SUMMARIZED';
};
/**
 * How a stored message is rendered in the model's view. The stored original never
 * changes; the state only changes what BuildMessages shows.
 */
export type ViewState = 'VIEW_STATE_UNSPECIFIED' | 0
/**
 * Rendered whole.
 */
 | 'VIEW_STATE_FULL' | 1
/**
 * An old tool result replaced by a short placeholder (tool, size, how to recover it).
 */
 | 'VIEW_STATE_CLEARED' | 2
/**
 * A large tool result rendered as a head + tail preview with a pointer to the original.
 */
 | 'VIEW_STATE_EVICTED' | 3
/**
 * Covered by a summary of the older steps of its turn (a long single turn that no
 * longer fit): not in the view; the summary stands for it. Expand returns it.
 */
 | 'VIEW_STATE_SUMMARIZED' | 4;
/**
 * How a stored message is rendered in the model's view. The stored original never
 * changes; the state only changes what BuildMessages shows.
 */
export type ViewState__Output = typeof ViewState[keyof typeof ViewState];
