// --target (target/target.h) and the quoting of what the device's shell
// reads (target/ssh.h).
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "base/subprocess.h"
#include "target/ssh.h"
#include "target/target.h"

namespace perfgate {
namespace {

TEST(Target, NoTargetIsThisHost) {
  const Target t = ParseTarget("");
  EXPECT_FALSE(t.remote());
  EXPECT_EQ(t.url, "");
}

TEST(Target, UserHostAndPort) {
  const Target t = ParseTarget("ssh://root@board-7.lab:2222");
  EXPECT_TRUE(t.remote());
  EXPECT_EQ(t.user, "root");
  EXPECT_EQ(t.host, "board-7.lab");
  EXPECT_EQ(t.port, 2222);
  EXPECT_EQ(t.url, "ssh://root@board-7.lab:2222");
  const Target bare = ParseTarget("ssh://10.0.2.15");
  EXPECT_EQ(bare.user, "");
  EXPECT_EQ(bare.host, "10.0.2.15");
  EXPECT_EQ(bare.port, 0);
  const Target v6 = ParseTarget("ssh://perf@[fe80::1%eth0]:22");
  EXPECT_EQ(v6.user, "perf");
  EXPECT_EQ(v6.host, "fe80::1%eth0");
  EXPECT_EQ(v6.port, 22);
}

// Each bad target is one line naming --target and the text, exit 2.
TEST(Target, BadTargetsAreBadInputNamingTheOption) {
  for (const char* bad : {"board", "adb://serial", "ssh://", "ssh://root@", "ssh://root:secret@board",
                          "ssh://board:0", "ssh://board:99999", "ssh://board:22x", "ssh://board/tmp",
                          "ssh://-oProxyCommand=x", "ssh://ro ot@board", "ssh://[fe80::1", "ssh://board:"}) {
    try {
      ParseTarget(bad);
      ADD_FAILURE() << bad << " was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput) << bad;
      EXPECT_NE(std::string(e.what()).find(std::string("--target ") + bad), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

// A password in the URL is refused by name: ssh's configuration holds keys.
TEST(Target, APasswordInTheUrlIsRefused) {
  try {
    ParseTarget("ssh://root:hunter2@board");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("password"), std::string::npos) << e.what();
  }
}

// What the device's shell reads back is each word as it was, whatever it holds.
TEST(Target, ShellQuotedWordsReachTheShellAsTheyWere) {
  const std::string words[] = {"plain", "it's", "a b", "$HOME", "`id`", "\"q\"", "back\\slash", "", "new\nline"};
  for (const std::string& word : words) {
    const CapturedCommand echoed = RunCaptured({"sh", "-c", "printf %s " + ShellQuote(word)});
    EXPECT_EQ(echoed.status, 0) << word;
    EXPECT_EQ(echoed.out, word);
  }
}

// The command's input arrives whole; held open, it ends when the command does.
TEST(Subprocess, InputArrivesWholeAndAHeldInputEndsWithTheCommand) {
  CaptureOptions options;
  options.input = std::string(300000, 'x') + "end";
  const CapturedCommand counted = RunCaptured({"wc", "-c"}, options);
  EXPECT_EQ(counted.status, 0);
  EXPECT_EQ(std::stoul(counted.out), 300003u);

  // A reader of the input in the background: it ends at once on /dev/null,
  // and stays while the input is held (as the device's watcher does).
  const std::string script =
      "exec 3<&0; cat <&3 > /dev/null & sleep 0.3; if kill -0 $! 2> /dev/null; then echo open; else echo ended; fi; "
      "kill $! 2> /dev/null; true";
  EXPECT_EQ(RunCaptured({"sh", "-c", script}).out, "ended\n");
  CaptureOptions held;
  held.hold_input_open = true;
  EXPECT_EQ(RunCaptured({"sh", "-c", script}, held).out, "open\n");
}

}  // namespace
}  // namespace perfgate
