#pragma once
// The loading step: after files are opened, a non-modal page of the main tabs shows the planes
// as thumbnails with their z, the proposed planes (core's io/StackPlan.h: around the brightest plane),
// and every setting the fit still needs in one place, each with where its value came from (file, sidecar,
// default, user) and its problem beside it. Start is enabled when nothing is missing. Contradicting
// metadata show both values as choices. The page holds no settings of its own: it reads and edits the
// setup panel's fields, so the two always agree, and it draws what core computes.
#include "io/SettingsProblems.h"
#include "io/StackPlan.h"

#include <QWidget>

#include <map>
#include <set>
#include <string>
#include <vector>

class QComboBox;
class QGridLayout;
class QVBoxLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QMainWindow;
class QPushButton;

namespace wfs::ui {

class SetupPanel;

class StackLoadPanel : public QWidget {
    Q_OBJECT

public:
    explicit StackLoadPanel(SetupPanel* setup, QWidget* parent = nullptr);

    // Shows `dataset` (statistics and thumbnails are computed on a worker; ready() follows). With
    // `propose`, the plane proposal and its focus plane are put into the setup panel once computed.
    void setDataset(const Dataset& dataset, bool propose);

    // Whether `dataset` holds the files this step shows (same paths and checksums).
    bool showsFilesOf(const Dataset& dataset) const;
    int thumbnailCount() const;
    const StackPlan& plan() const { return m_plan; }
    const std::vector<SettingProblem>& problems() const { return m_problems; }
    bool canStart() const;
    // The label of the thumbnail of dataset plane `plane` ("plane 10 · z = 0 µm").
    QString thumbnailText(int plane) const;

signals:
    void ready();

private:
    void buildThumbnails(QVBoxLayout* layout);
    void buildProposal(QVBoxLayout* layout);
    void buildSettings(QVBoxLayout* layout);
    void buildProblemsAndStart(QVBoxLayout* layout);
    struct Row {
        std::string key;     // DatasetMetadata field name
        std::string setting; // command-line spelling (SettingProblem::setting)
        QLineEdit* edit = nullptr;
        QComboBox* combo = nullptr;
        QLabel* origin = nullptr;
        QLabel* status = nullptr;
        QWidget* choices = nullptr; // a conflict's two values as buttons
    };
    void addRow(QGridLayout* grid, const QString& label, const std::string& key, const std::string& setting, const QString& placeholder);
    void refresh();
    void showRow(Row& row, const DatasetMetadata& m);
    void commit(const Row& row);
    void choose(const std::string& key, double value);
    void usePlanes(const std::vector<int>& planes);
    DatasetMetadata currentMetadata() const;

    SetupPanel* m_setup;
    Dataset m_dataset; // the planes without pixels, the metadata as loaded
    std::vector<PlaneStatistics> m_statistics;
    StackPlan m_plan;
    std::vector<SettingProblem> m_problems;
    std::map<std::string, SettingProblem> m_rejected; // typed text core refused, by metadata key
    std::set<std::string> m_questioned;               // of those, lengths typed without a unit (core asks for it)
    int m_generation = 0;
    bool m_refreshing = false;

    QLabel *m_header, *m_proposal, *m_summary;
    QListWidget *m_thumbnails, *m_problemList;
    QPushButton *m_useProposal, *m_useAll, *m_start;
    std::vector<Row> m_rows;
};

// Shows the loading step for `dataset` as the first page of the window's main tabs (made on first use)
// and brings it to the front; `propose`: put the plane proposal into the setup panel. Without `propose`
// (simulated data with known settings) an existing step is removed and the setup panel's marks refreshed.
void showLoadStep(QMainWindow* window, SetupPanel* setup, const Dataset& dataset, bool propose);
// The loading step of `window`, or null.
StackLoadPanel* loadStepOf(QMainWindow* window);

} // namespace wfs::ui
