#include "sagebuild/verify/command.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "sagebuild/common/error.h"
#include "sagebuild/common/text.h"

namespace sb::verify {

namespace {

// One entry of the --json array.  Strings are already valid UTF-8 (report.cc);
// `replace` is the backstop that keeps a slip from ending the whole array.
std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A file that could not be verified still gets its entry in the array.
nlohmann::json error_entry(const std::string& file, const std::string& why) {
  return {{"path", printable(file)}, {"ok", false}, {"error", printable(why)}};
}

}  // namespace

int run_verify(const std::vector<std::string>& files, const Options& options, bool json, std::ostream& out,
               std::ostream& err, const Marks& marks) {
  int code = 0;
  // Each report is printed as soon as it is complete, so one file that fails
  // (or a bug of ours) never takes the others' reports with it.
  if (json) out << "[";
  bool first = true;
  auto emit = [&](const nlohmann::json& j) {
    out << (first ? "\n" : ",\n") << json_text(j);
    first = false;
  };
  for (const auto& file : files) {
    try {
      Report r = verify_wheel(file, options);
      if (r.failed(options.lenient)) code = std::max(code, 1);
      if (json)
        emit(to_json(r, options.lenient));
      else
        out << format_human(r, options.lenient, marks);
    } catch (const IoError& e) {
      err << "sagebuild verify: error: " << printable(e.what()) << "\n";
      if (json) emit(error_entry(file, e.what()));
      code = 2;
    } catch (const std::exception& e) {  // a bug of ours: say so, keep going
      std::string why = std::string("internal error (a bug in sagebuild, please report it): ") + e.what();
      err << "sagebuild verify: " << printable(file) << ": " << printable(why) << "\n";
      if (json) emit(error_entry(file, why));
      code = 2;
    }
    out.flush();
  }
  if (json) out << (first ? "]\n" : "\n]\n");
  return code;
}

void add_verify_command(CLI::App& app, cli::Context& ctx) {
  struct Args {
    std::vector<std::string> files;
    bool json = false;
    std::string policy_dir;
    std::vector<std::string> allow;
    Options options;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("verify", "Check wheels against the strict wheel checklist (and our build rules)");
  cmd->add_option("FILE", args->files, "Wheel files to verify")->required();
  cmd->add_flag("--lenient", args->options.lenient, "Fail on Error findings only (Strict ones are reported)");
  cmd->add_flag("--json", args->json, "Print a JSON array of reports instead of text");
  cmd->add_option("--policy-dir", args->policy_dir,
                  "Directory with a manylinux-policy.json to use instead of the built-in manylinux policy");
  cmd->add_option("--allow-lib", args->allow, "Extra DT_NEEDED glob allowed in manylinux wheels (repeatable)");
  cmd->callback([args, &ctx] {
    args->options.policy_dir =
        args->policy_dir.empty() ? default_policy_dir() : std::filesystem::path(args->policy_dir);
    std::error_code ec;
    if (!args->policy_dir.empty() && !std::filesystem::exists(args->options.policy_dir / kPolicyFile, ec))
      throw UsageError("--policy-dir " + args->policy_dir + ": no " + kPolicyFile +
                       " there (expected a directory holding a policy in the format of "
                       "tools/sagebuild/verify/manylinux-policy.json)");
    for (const auto& a : args->allow) args->options.allowed_libraries.push_back(a);
    policy_for(args->options);  // a bad policy is the command's error, before any wheel is read
    ctx.exit_code = run_verify(args->files, args->options, args->json, std::cout, std::cerr, marks_for_environment());
  });
}

int run_explain(const std::vector<std::string>& names, bool json, std::ostream& out, const Marks& marks) {
  int code = 0;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& name : names) {
    wheel::Explained e = wheel::explain_name(name);
    if (!e.ok()) code = 1;
    if (json) {
      nlohmann::json j = components_json(e.parts, e.notes);
      j["name"] = printable(name);
      j["kind"] = e.kind;
      j["ok"] = e.ok();
      j["problems"] = nlohmann::json::array();
      for (const auto& p : e.problems) j["problems"].push_back(printable(p));
      all.push_back(std::move(j));
      continue;
    }
    out << printable(name) << ": " << e.kind << (e.ok() ? "" : ", does not decode") << "\n"
        << format_components(e.parts, e.notes, marks);
    for (const auto& p : e.problems) out << "  " << marks.bad << " " << printable(p) << "\n";
  }
  if (json) out << json_text(all) << "\n";
  return code;
}

void add_explain_command(CLI::App& app, cli::Context& ctx) {
  struct Args {
    std::vector<std::string> names;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "explain", "Decode wheel file names, build tags (280.129) or local versions (+cu128torch2.9.0) part by part");
  cmd->add_option("NAME", args->names, "A wheel file name, a build tag or a local version")->required();
  cmd->add_flag("--json", args->json, "Print a JSON array instead of text");
  cmd->callback(
      [args, &ctx] { ctx.exit_code = run_explain(args->names, args->json, std::cout, marks_for_environment()); });
}

}  // namespace sb::verify
