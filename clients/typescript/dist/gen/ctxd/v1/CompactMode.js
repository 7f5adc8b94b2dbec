export const CompactMode = {
    /**
     * Same as AUTO.
     */
    COMPACT_MODE_UNSPECIFIED: 'COMPACT_MODE_UNSPECIFIED',
    /**
     * The cheapest layers first until the target is reached: clearing old tool results,
     * then summarizing the oldest turns.
     */
    COMPACT_MODE_AUTO: 'COMPACT_MODE_AUTO',
    /**
     * Turn old tool results into placeholders: oldest first, outside the protected newest
     * tool output, never pinned ones, until the target is reached.
     */
    COMPACT_MODE_CLEAR_TOOL_RESULTS: 'COMPACT_MODE_CLEAR_TOOL_RESULTS',
    /**
     * Summarize the oldest whole turns (the newest turn always stays) into leaf summaries,
     * condensing runs of them, until the target is reached.
     */
    COMPACT_MODE_SUMMARIZE: 'COMPACT_MODE_SUMMARIZE',
    /**
     * The provider just refused the request for its length: one pass, whatever the target,
     * that reduces the oldest half of the turns to a deterministic note; when one long turn
     * is all there is, its user message and newest step stay and the steps between become
     * the note (a tool result too large on its own is already a head + tail preview).
     */
    COMPACT_MODE_EMERGENCY: 'COMPACT_MODE_EMERGENCY',
};
