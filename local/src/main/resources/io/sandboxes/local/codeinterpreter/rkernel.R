# The local code interpreter's R contexts: one R process per context, driven by kernels.py.
#
# Part of the Sandboxes local runtime (the code-interpreter-v1 template). Base R only (Debian's
# r-base-core; no IRkernel, no jsonlite). Arguments: the descriptor requests arrive on, and the
# descriptor answers go to. A request is one line: the run's token, then the code and each env var's
# name and value, every field hex-encoded UTF-8 behind an 'x'. The code is evaluated expression by
# expression in the global environment, as IRkernel does: each visible value is shown as a display
# (its printed form, text/plain), printed output is stdout, messages and warnings are stderr, and the
# first error ends the run. The answer is the token and a JSON object: displays, and an error if one
# ended the run. Before it, the token between two 0x1e bytes goes to stdout and to stderr.
local({
  args <- commandArgs(trailingOnly = TRUE)
  requests <- file(sprintf("/proc/self/fd/%s", args[[1]]), open = "r", raw = TRUE)
  answers <- file(sprintf("/proc/self/fd/%s", args[[2]]), open = "w", raw = TRUE)

  unhex <- function(field) {
    h <- substring(field, 2)
    if (!nzchar(h)) {
      return("")
    }
    s <- rawToChar(as.raw(strtoi(substring(h, seq(1, nchar(h), 2), seq(2, nchar(h), 2)), 16L)))
    Encoding(s) <- "UTF-8"
    s
  }

  json <- function(s) {
    s <- enc2utf8(as.character(s))
    if (is.na(s)) {
      return("null")
    }
    for (p in list(c("\\", "\\\\"), c("\"", "\\\""), c("\n", "\\n"), c("\r", "\\r"), c("\t", "\\t"))) {
      s <- gsub(p[[1]], p[[2]], s, fixed = TRUE, useBytes = TRUE)
    }
    if (grepl("[\001-\037\177]", s, perl = TRUE, useBytes = TRUE)) {
      cp <- utf8ToInt(s)
      if (anyNA(cp)) {
        cp <- utf8ToInt(iconv(s, "UTF-8", "UTF-8", sub = "?"))
      }
      control <- cp < 32 | cp == 127
      pieces <- intToUtf8(cp, multiple = TRUE)
      pieces[control] <- sprintf("\\u%04x", cp[control])
      s <- paste(pieces, collapse = "")
    }
    paste0("\"", s, "\"")
  }

  # the error as IRkernel reports it: name ERROR, the condition as R prints it
  describe <- function(e) {
    call <- conditionCall(e)
    where <- if (is.null(call) || identical(call[[1]], quote(eval))) "" else paste0(" in ", deparse(call, nlines = 1L))
    list(name = "ERROR", value = paste0("Error", where, ": ", conditionMessage(e), "\n"))
  }

  # a warning as IRkernel prints it, at once, on stderr
  warned <- function(w) {
    call <- conditionCall(w)
    where <- if (is.null(call) || identical(call[[1]], quote(eval))) "" else paste0("In ", deparse(call, nlines = 1L), ": ")
    cat("Warning message:\n", where, conditionMessage(w), "\n", sep = "", file = stderr())
    invokeRestart("muffleWarning")
  }

  run <- function(code) {
    shown <- character(0)
    exprs <- tryCatch(parse(text = code, keep.source = FALSE), error = function(e) e)
    if (inherits(exprs, "error")) {
      return(list(shown = shown, error = describe(simpleError(conditionMessage(exprs)))))
    }
    for (i in seq_along(exprs)) {
      outcome <- tryCatch(withCallingHandlers(withVisible(eval(exprs[[i]], envir = globalenv())), warning = warned),
                          error = function(e) e, interrupt = function(cond) cond)
      if (inherits(outcome, "interrupt")) {
        return(list(shown = shown, error = list(name = "KeyboardInterrupt", value = "interrupted")))
      }
      if (inherits(outcome, "error")) {
        return(list(shown = shown, error = describe(outcome)))
      }
      if (isTRUE(outcome$visible)) {
        text <- tryCatch(paste(utils::capture.output(print(outcome$value)), collapse = "\n"),
                         error = function(e) paste0("<a value that could not be printed: ", conditionMessage(e), ">"))
        shown <- c(shown, text)
      }
    }
    list(shown = shown, error = NULL)
  }

  repeat {
    # an interrupt that lands between runs (a client gone just as its run ended) is not for the next one
    line <- tryCatch(readLines(requests, n = 1L, warn = FALSE), interrupt = function(cond) NA)
    if (identical(line, NA)) {
      next
    }
    if (length(line) == 0L) {
      break # the bridge closed its end: the context is over
    }
    fields <- strsplit(line, " ", fixed = TRUE)[[1]]
    token <- fields[[1]]
    code <- unhex(fields[[2]])
    env <- fields[-(1:2)]
    pairs <- seq_len(length(env) %/% 2L)
    names <- vapply(env[2L * pairs - 1L], unhex, "", USE.NAMES = FALSE)
    values <- vapply(env[2L * pairs], unhex, "", USE.NAMES = FALSE)
    before <- Sys.getenv(names, unset = NA, names = FALSE)
    if (length(names)) {
      do.call(Sys.setenv, as.list(stats::setNames(values, names)))
    }
    outcome <- tryCatch(run(code), interrupt = function(cond) {
      list(shown = character(0), error = list(name = "KeyboardInterrupt", value = "interrupted"))
    })
    for (k in seq_along(names)) {
      if (is.na(before[[k]])) Sys.unsetenv(names[[k]]) else do.call(Sys.setenv, stats::setNames(list(before[[k]]), names[[k]]))
    }
    reply <- paste0("{\"displays\":[", paste(vapply(outcome$shown, function(t) paste0("{\"text/plain\":", json(t), "}"), "",
                                                     USE.NAMES = FALSE), collapse = ","), "]")
    if (!is.null(outcome$error)) {
      reply <- paste0(reply, ",\"error\":{\"name\":", json(outcome$error$name), ",\"value\":", json(outcome$error$value),
                      ",\"traceback\":\"\"}")
    }
    mark <- paste0("\036", token, "\036")
    cat(mark, file = stdout())
    flush(stdout())
    cat(mark, file = stderr())
    flush(stderr())
    cat(token, " ", reply, "}\n", sep = "", file = answers)
    flush(answers)
  }
})
