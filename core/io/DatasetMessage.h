#pragma once
// What the data layer tells the user: messages that never stop the work (addFiles, prepare, buildProblem's
// warnings) and DatasetError for what stops it; each text names the file, plane or quantity concerned.
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

class DatasetError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class MessageLevel { Info, Warning, Error };
const char* messageLevelName(MessageLevel level); // "info", "warning", "error"

struct DatasetMessage {
    MessageLevel level = MessageLevel::Info;
    std::string file; // the file concerned (as given), or empty
    std::string text; // a whole sentence that already names the file or plane
};
// The texts of the messages at `level`, one per line (empty when there are none).
std::string messagesText(const std::vector<DatasetMessage>& messages, MessageLevel level);

} // namespace wfs
