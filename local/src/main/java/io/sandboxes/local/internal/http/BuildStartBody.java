package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.sandboxes.local.internal.build.BuildStart;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.http.RequestBody.Refusal;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code POST /v2/templates/{id}/builds/{build}}: a build's start, as E2B's SDK sends it. The
 * steps must be a list, checked once the build is known ({@link RequestBody.Later}); everything
 * else is read leniently, as it always was: texts as any value's text, flags as {@code asBoolean}
 * reads them. A registry is only looked at to be refused.
 */
record BuildStartBody(@Refusal("'steps' must be a list") RequestBody.@Nullable Later<Lenient.Parts<Step>> steps,
    @Nullable JsonNode fromImageRegistry,
    @JsonDeserialize(using = Lenient.Text.class) @Nullable String fromImage,
    @JsonDeserialize(using = Lenient.Text.class) @Nullable String fromTemplate,
    Lenient.@Nullable Flag force,
    @JsonDeserialize(using = Lenient.Text.class) @Nullable String startCmd,
    @JsonDeserialize(using = Lenient.Text.class) @Nullable String readyCmd) {

  /** One step; an entry that is no object has no fields. Its arguments are a list's (or an object's) values as text. */
  record Step(@JsonDeserialize(using = Lenient.Text.class) @Nullable String type,
      @JsonDeserialize(using = Lenient.Texts.class) @Nullable List<String> args,
      @JsonDeserialize(using = Lenient.Text.class) @Nullable String filesHash, Lenient.@Nullable Flag force) {

    BuildStart.Step value() {
      return new BuildStart.Step(type, args == null ? List.of() : args, filesHash, Lenient.Flag.or(force, false));
    }
  }

  /** The start the body asks for; its steps are bound here, so a list that is none is refused now. */
  BuildStart value() throws RpcError {
    Lenient.Parts<Step> s = RequestBody.Later.of(steps);
    List<BuildStart.Step> out = new ArrayList<>();
    if (s != null) {
      s.values().forEach(step -> out.add(step.value()));
    }
    return new BuildStart(fromImage, fromTemplate, fromImageRegistry != null && !fromImageRegistry.isNull(), out,
        Lenient.Flag.or(force, false), startCmd, readyCmd);
  }
}
