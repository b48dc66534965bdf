package io.sandboxes;

/**
 * A provider that can prove, by observation, that sandboxes cannot reach the network freely.
 *
 * @since 0.1
 */
public interface EgressVerification {

  /**
   * Creates a throwaway sandbox with a deny-by-default allow-list, probes an allowed host, a
   * denied host and a raw IP from inside it, classifies what it saw, and destroys it. Never
   * throws: a probe that cannot run or observe is {@link EgressVerdict.State#INCONCLUSIVE}, never
   * {@link EgressVerdict.State#FILTERED}.
   *
   * @return the verdict, with what was observed and, when egress is not filtered, what to do
   */
  EgressVerdict verifyEgress();
}
