package io.sandboxes.local.contract;

import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Contract tests that share one sandbox behind a recording harness. Their methods run on one
 * thread, because they read the order of the requests that crossed the wire.
 */
@ExtendWith(SharedServer.class)
@Execution(ExecutionMode.SAME_THREAD)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OneSandboxCases {
  Harness h;
  Sandbox sandbox;

  /** @return the project id the shared sandbox is created for */
  abstract String project();

  /** Runs once the sandbox exists. */
  void prepare() {
  }

  @BeforeAll
  void startSandbox(LocalServer server) throws Exception {
    h = new Harness(server);
    sandbox = h.provider.create(SandboxConfig.forProject(project()));
    prepare();
  }

  @AfterAll
  void stopSandbox() throws Exception {
    sandbox.close();
    h.close();
  }
}
