// The build matrix's `upstream:` and `packages:` sections: what each package
// is (name, version, naming, ABI, the tree it is built from, its archs and
// floors) and, for those built from upstream's tree, which tree.  Read after
// `pythons:`, `platforms:`, `cuda:` and `torch:`, whose names they refer to.
#pragma once

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/matrix/yaml_reader.h"

namespace sb::matrix {

// `upstream: {repository: owner/name, commit: <40 hex>}`: where the trees of
// upstream sources come from, pinned to one commit.
void parse_upstream(const YamlValue& node, Matrix& m);

// `packages:`, sorted by name; each checked against the sections before it.
void parse_packages(const YamlValue& node, Matrix& m);

// A package built from upstream's tree needs to know which tree: `upstream:`.
void check_upstream_sources(const Matrix& m);

}  // namespace sb::matrix
