// CLI config files: flat YAML or TOML mappings (yaml-cpp / toml11 errors
// must come back as a Status naming the file). The first byte picks the
// format.
#include "config.h"
#include "fuzz_util.h"

using namespace foresight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string yaml = fuzz::ScratchFile("config.yaml");
  static const std::string toml = fuzz::ScratchFile("config.toml");
  const std::string& path = (data[0] & 1) ? toml : yaml;
  fuzz::WriteScratch(path, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  auto c = apps::ReadConfigFile(path);
  fuzz::Report("ReadConfigFile", c.status());
  fuzz::CheckNotInternal(c.status(), "ReadConfigFile");
  if (c.ok()) {
    for (const apps::ConfigEntry& e : c->entries) (void)e.value.Describe();
  }
  return 0;
}
