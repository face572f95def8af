// PEP 440 versions: a hand-written parser over the lowercased text (one
// function per segment, in the order the spec's grammar lists them), the
// normalized spelling, and the spec's total order.
#include "sagebuild/wheel/pep440.h"

#include "sagebuild/common/error.h"
#include "sagebuild/common/text.h"

#include <algorithm>
#include <array>
#include <limits>

#include "sagebuild/wheel/names.h"

namespace sb::wheel {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_sep(char c) { return c == '.' || c == '-' || c == '_'; }

// A cursor over the lowercased, trimmed text. Each segment parser either
// consumes its segment or leaves `pos` where it was.
struct Cursor {
  std::string_view text;
  std::size_t pos = 0;
  std::string error;  // set on the first hard failure (overflow)
  // Where the last pre/post/dev label without a number started and ended:
  // in "1.16.0_build1" the parser reads "_b" as beta, and the error should
  // point at "_build1", not at "uild1".
  std::size_t bare_label_start = std::string_view::npos;
  std::size_t bare_label_end = std::string_view::npos;

  bool done() const { return pos >= text.size(); }
  char peek(std::size_t ahead = 0) const { return pos + ahead < text.size() ? text[pos + ahead] : '\0'; }
  bool eat(std::string_view word) {
    if (text.substr(pos, word.size()) != word) return false;
    pos += word.size();
    return true;
  }
  bool eat_sep() {
    if (!is_sep(peek())) return false;
    ++pos;
    return true;
  }
  // Digits as a uint64; a number that does not fit is an error, not a wrap.
  std::optional<std::uint64_t> number() {
    if (!is_digit(peek())) return std::nullopt;
    std::uint64_t value = 0;
    std::size_t start = pos;
    constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
    for (; is_digit(peek()); ++pos) {
      unsigned d = static_cast<unsigned>(peek() - '0');
      if (value > (kMax - d) / 10) {
        error = "number '" + clip(text.substr(start, pos - start + 1)) +
                "...' exceeds 18446744073709551615, the largest supported version number";
        return std::nullopt;
      }
      value = value * 10 + d;
    }
    return value;
  }
};

// The first label of `labels` found at the cursor (longest spellings first).
template <std::size_t N>
int eat_label(Cursor& c, const std::array<std::string_view, N>& labels) {
  for (std::size_t i = 0; i < N; ++i)
    if (c.eat(labels[i])) return static_cast<int>(i);
  return -1;
}

// [sep] LABEL [sep] [N]: the shape shared by pre, post and dev segments.
// Returns the label index, or -1 with the cursor unmoved.
template <std::size_t N>
int labeled_segment(Cursor& c, const std::array<std::string_view, N>& labels, std::uint64_t& number) {
  std::size_t start = c.pos;
  c.eat_sep();
  int label = eat_label(c, labels);
  if (label < 0) {
    c.pos = start;
    return -1;
  }
  std::size_t label_end = c.pos;
  c.eat_sep();
  auto n = c.number();
  number = n.value_or(0);  // an omitted number means 0
  if (!n) {
    c.bare_label_start = start;
    c.bare_label_end = label_end;
  }
  return label;
}

bool parse_epoch_and_release(Cursor& c, Version& v) {
  auto first = c.number();
  if (!first) return false;
  if (c.peek() == '!') {
    ++c.pos;
    v.epoch = *first;
    first = c.number();
    if (!first) return false;
  }
  v.release.push_back(*first);
  while (c.peek() == '.' && is_digit(c.peek(1))) {
    ++c.pos;
    auto n = c.number();
    if (!n) return false;
    v.release.push_back(*n);
  }
  return true;
}

void parse_pre(Cursor& c, Version& v) {
  static constexpr std::array<std::string_view, 8> kLabels = {"preview", "alpha", "beta", "pre", "rc", "a", "b", "c"};
  static constexpr std::array<PreKind, 8> kKinds = {PreKind::Rc, PreKind::Alpha, PreKind::Beta, PreKind::Rc,
                                                    PreKind::Rc, PreKind::Alpha, PreKind::Beta, PreKind::Rc};
  std::uint64_t n = 0;
  int label = labeled_segment(c, kLabels, n);
  if (label >= 0) v.pre = PreRelease{kKinds[static_cast<std::size_t>(label)], n};
}

void parse_post(Cursor& c, Version& v) {
  // "1.0-1" is an implicit post release; only '-' may introduce it.
  if (c.peek() == '-' && is_digit(c.peek(1))) {
    ++c.pos;
    if (auto n = c.number()) v.post = *n;
    return;
  }
  static constexpr std::array<std::string_view, 3> kLabels = {"post", "rev", "r"};
  std::uint64_t n = 0;
  if (labeled_segment(c, kLabels, n) >= 0) v.post = n;
}

void parse_dev(Cursor& c, Version& v) {
  static constexpr std::array<std::string_view, 1> kLabels = {"dev"};
  std::uint64_t n = 0;
  if (labeled_segment(c, kLabels, n) >= 0) v.dev = n;
}

LocalSegment make_local_segment(std::string_view text) {
  bool numeric = std::all_of(text.begin(), text.end(), is_digit);
  if (!numeric) return {std::string(text), false};
  std::size_t nz = text.find_first_not_of('0');
  return {nz == std::string_view::npos ? "0" : std::string(text.substr(nz)), true};
}

// "+" [a-z0-9]+ ([-_.][a-z0-9]+)*
bool parse_local(Cursor& c, Version& v) {
  if (c.peek() != '+') return true;
  ++c.pos;
  while (true) {
    std::size_t start = c.pos;
    while (is_ascii_alnum(c.peek())) ++c.pos;
    if (c.pos == start) return false;
    v.local.push_back(make_local_segment(c.text.substr(start, c.pos - start)));
    if (!is_sep(c.peek())) return true;
    ++c.pos;
  }
}

std::string failure_message(std::string_view original, const Cursor& c) {
  if (!c.error.empty()) return "invalid version '" + clip(original) + "': " + c.error;
  std::string msg = "invalid version '" + clip(original) + "'";
  std::size_t at = c.pos == c.bare_label_end ? c.bare_label_start : c.pos;
  if (at >= c.text.size())
    msg += ": ends too early";
  else
    msg += ": unexpected '" + clip(c.text.substr(at)) + "'";
  return msg + "; expected PEP 440 [N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local], e.g. 2.8.0";
}

// -1, 0, 1 for two digit strings without leading zeros.
int compare_digits(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

std::strong_ordering compare_local(const std::vector<LocalSegment>& a, const std::vector<LocalSegment>& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    // Numeric segments sort after alphanumeric ones (spec, "Local version identifiers").
    if (x.numeric != y.numeric) return x.numeric ? std::strong_ordering::greater : std::strong_ordering::less;
    int c = x.numeric ? compare_digits(x.text, y.text) : x.text.compare(y.text);
    if (c != 0) return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  return a.size() <=> b.size();  // a longer label with the same prefix sorts later
}

std::strong_ordering compare_release(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x <=> y;
  }
  return std::strong_ordering::equal;
}

// Sort keys for the optional segments, following the spec's order:
// X.devN < X.aN < X.bN < X.rcN < X < X.postN.
struct PreKey {
  int rank;  // 0: dev-only release (before any pre), 1: pre-release, 2: none
  PreRelease pre;
  auto operator<=>(const PreKey&) const = default;
};
PreKey pre_key(const Version& v) {
  if (v.pre) return {1, *v.pre};
  if (!v.post && v.dev) return {0, {}};
  return {2, {}};
}
std::pair<int, std::uint64_t> post_key(const Version& v) {
  return v.post ? std::pair{1, *v.post} : std::pair{0, std::uint64_t{0}};
}
std::pair<int, std::uint64_t> dev_key(const Version& v) {
  return v.dev ? std::pair{0, *v.dev} : std::pair{1, std::uint64_t{0}};
}

}  // namespace

std::string_view to_string(PreKind k) {
  switch (k) {
    case PreKind::Alpha:
      return "a";
    case PreKind::Beta:
      return "b";
    case PreKind::Rc:
      return "rc";
  }
  return "a";
}

std::optional<Version> parse_version(std::string_view text, std::string* why) {
  std::string lowered = ascii_lower(trim_ascii_space(text));
  Cursor c{lowered, 0, {}, std::string_view::npos, std::string_view::npos};
  Version v;
  if (c.peek() == 'v') ++c.pos;
  bool ok = parse_epoch_and_release(c, v);
  if (ok) {
    parse_pre(c, v);
    parse_post(c, v);
    parse_dev(c, v);
    ok = c.error.empty() && parse_local(c, v) && c.done();
  }
  if (!ok) {
    set_why(why, failure_message(text, c));
    return std::nullopt;
  }
  return v;
}

bool is_normalized(std::string_view text) {
  auto v = parse_version(text);
  return v && v->str() == text;
}

std::string Version::public_str() const {
  std::string out;
  if (epoch != 0) out += std::to_string(epoch) + "!";
  for (std::size_t i = 0; i < release.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(release[i]);
  }
  if (pre) out += std::string(to_string(pre->kind)) + std::to_string(pre->number);
  if (post) out += ".post" + std::to_string(*post);
  if (dev) out += ".dev" + std::to_string(*dev);
  return out;
}

std::string Version::local_str() const {
  std::string out;
  for (std::size_t i = 0; i < local.size(); ++i) {
    if (i) out += '.';
    out += local[i].text;
  }
  return out;
}

std::string Version::str() const { return local.empty() ? public_str() : public_str() + "+" + local_str(); }

Version Version::public_version() const {
  Version v = *this;
  v.local.clear();
  return v;
}

Version Version::base_version() const {
  Version v;
  v.epoch = epoch;
  v.release = release;
  return v;
}

std::strong_ordering Version::operator<=>(const Version& o) const {
  if (auto c = epoch <=> o.epoch; c != 0) return c;
  if (auto c = compare_release(release, o.release); c != 0) return c;
  if (auto c = pre_key(*this) <=> pre_key(o); c != 0) return c;
  if (auto c = post_key(*this) <=> post_key(o); c != 0) return c;
  if (auto c = dev_key(*this) <=> dev_key(o); c != 0) return c;
  return compare_local(local, o.local);
}

bool Version::operator==(const Version& o) const { return (*this <=> o) == 0; }

}  // namespace sb::wheel
