// METADATA and WHEEL (the email-header format and every field check,
// PEP 440 versions, PEP 508 requirements and markers, specifier sets).
#include "sagebuild/distinfo/metadata.h"
#include "sagebuild/distinfo/wheel_file.h"
#include "sagebuild/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  std::string_view text = fuzz::bytes(data, size);
  distinfo::MetadataExpectations meta;
  meta.filename_project = "sageattention";
  meta.filename_version = wheel::parse_version("2.2.0");
  meta.dist_info = "sageattention-2.2.0.dist-info";
  meta.has_member = [](std::string_view m) { return m.size() % 2 == 0; };
  distinfo::MetadataInfo info;
  fuzz::check_bounded(distinfo::check_metadata(text, "sageattention-2.2.0.dist-info/METADATA", meta, &info));
  distinfo::WheelFileExpectations wheel;
  wheel.tags = {"cp310-abi3-linux_x86_64"};
  wheel.build_tag = "21100.130";
  distinfo::WheelFileInfo winfo;
  fuzz::check_bounded(distinfo::check_wheel_file(text, "sageattention-2.2.0.dist-info/WHEEL", wheel, &winfo));
  return 0;
}
