/**
 * How a stored message is rendered in the model's view. The stored original never
 * changes; the state only changes what BuildMessages shows.
 */
export const ViewState = {
    VIEW_STATE_UNSPECIFIED: 'VIEW_STATE_UNSPECIFIED',
    /**
     * Rendered whole.
     */
    VIEW_STATE_FULL: 'VIEW_STATE_FULL',
    /**
     * An old tool result replaced by a short placeholder (tool, size, how to recover it).
     */
    VIEW_STATE_CLEARED: 'VIEW_STATE_CLEARED',
    /**
     * A large tool result rendered as a head + tail preview with a pointer to the original.
     */
    VIEW_STATE_EVICTED: 'VIEW_STATE_EVICTED',
    /**
     * Covered by a summary of the older steps of its turn (a long single turn that no
     * longer fit): not in the view; the summary stands for it. Expand returns it.
     */
    VIEW_STATE_SUMMARIZED: 'VIEW_STATE_SUMMARIZED',
};
